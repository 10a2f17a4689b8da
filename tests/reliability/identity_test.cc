// Processes that change identity after heaprec started: workers that drop privileges (and point
// descriptor 2 at their own log, as nginx does) still leave their profiles, listed by heaprec run,
// and heaprec's messages never land in the program's log.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "reliability_util.h"

namespace heaprec::reliability {
namespace {

class IdentityTest : public ReliabilityTest {
 protected:
  void SetUp() override {
    ASSERT_EQ(geteuid(), 0u) << "these scenarios switch users: run them as root (CI does)";
    // The output directory is the test's own, readable by all but writable by root only, like a
    // service's working directory.
    ASSERT_EQ(chmod(dir().c_str(), 0755), 0);
    log_ = "/tmp/heaprec-identity-" + std::to_string(getpid()) + ".log";
    std::ofstream(log_).close();
    ASSERT_EQ(chmod(log_.c_str(), 0666), 0);
  }
  void TearDown() override { std::filesystem::remove(log_); }

  std::string Log() const {
    std::ifstream in(log_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  std::string log_;
};

// Two workers switch to nobody after heaprec started; the output directory is not theirs. Each
// still leaves its exact profile, in heaprec-uid65534/ beside the usual ones; heaprec run lists
// them; nothing of heaprec's is in the workers' log.
TEST_F(IdentityTest, WorkersThatDropPrivilegesKeepTheirProfiles) {
  RunResult run = CompareWithHeaprec({"--sample-interval", "1"}, {REL_IDENTITY, "drop", log_});
  EXPECT_EQ(run.out, "worker 0 uid 65534\nworker 1 uid 65534\nmaster done\n");
  EXPECT_EQ(Log(), "");
  ProfileSet master = ReadProfiles(dir());
  ASSERT_EQ(master.final_profiles.size(), 1u) << Describe(run);
  EXPECT_EQ(SiteValues(master.files[master.final_profiles.begin()->second].profile,
                       "site_identity_master"),
            (Values{100, 300000, 100, 300000}));
  const std::string fallback = dir() + "/heaprec-uid65534";
  struct stat st;
  ASSERT_EQ(stat(fallback.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ProfileSet workers = ReadProfiles(fallback);
  ASSERT_EQ(workers.final_profiles.size(), 2u) << Describe(run);
  for (const auto& [pid, index] : workers.final_profiles) {
    const ProfileFile& file = workers.files[index];
    EXPECT_EQ(file.reason, "exit");
    EXPECT_EQ(SiteValues(file.profile, "site_identity_worker"), (Values{300, 600000, 300, 600000}))
        << file.path;
    EXPECT_NE(run.err.find(file.path), std::string::npos) << "not listed\n" << Describe(run);
  }
}

// The same under LD_PRELOAD alone: the workers' profiles are there, the log stays clean.
TEST_F(IdentityTest, WorkersThatDropPrivilegesWithThePreloadLibrary) {
  RunResult run =
      CompareWithPreload({{"HEAPREC_SAMPLE_INTERVAL", "1"}}, {REL_IDENTITY, "drop", log_});
  EXPECT_EQ(run.out, "worker 0 uid 65534\nworker 1 uid 65534\nmaster done\n");
  EXPECT_EQ(Log(), "");
  EXPECT_EQ(ReadProfiles(dir() + "/heaprec-uid65534").final_profiles.size(), 2u) << Describe(run);
}

// The program points descriptor 2 at its log, then its output directory disappears: heaprec's
// complaint about the profile it cannot write goes to heaprec run, never into the log.
TEST_F(IdentityTest, MessagesNeverLandInTheProgramsLog) {
  const std::string out = dir() + "/out";
  std::filesystem::create_directory(out);
  RunResult run = RunGuarded({HEAPREC_BIN, "run", "--sample-interval", "1", "-o",
                              out + "/p.%p.pb.gz", "--", REL_IDENTITY, "log", log_, out},
                             dir());
  EXPECT_EQ(run.status, 0) << Describe(run);
  EXPECT_EQ(run.out, "logging to my own file\n");
  EXPECT_EQ(Log(), "");
  EXPECT_NE(run.err.find("could not write profile '" + out + "/p."), std::string::npos)
      << Describe(run);

  std::filesystem::remove_all(out + ".moved");
  std::filesystem::create_directory(out);
  RunResult preloaded = PreloadRunGuarded(
      dir(), {REL_IDENTITY, "log", log_, out},
      {{"HEAPREC_SAMPLE_INTERVAL", "1"}, {"HEAPREC_OUTPUT", out + "/p.%p.pb.gz"}});
  EXPECT_EQ(preloaded.status, 0) << Describe(preloaded);
  EXPECT_EQ(preloaded.err, "");
  EXPECT_EQ(Log(), "");
}

}  // namespace
}  // namespace heaprec::reliability
