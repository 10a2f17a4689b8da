// Dormant mode under load: blocks allocated before `heaprec attach` carry no sample tag, and the
// program reallocates and frees them from many threads while the attach happens and after it. The
// attach must break nothing (no crash, no hang, exit status and output unchanged), and the profile
// must hold none of them and count no missed frees: heaprec never mistakes one for a sample.
// tests/workloads/wl_dormant.c is the program; tests/e2e/dormant_test.cc checks the sites exactly.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "reliability_util.h"

namespace heaprec::reliability {
namespace {

struct Param {
  std::string interval;  // HEAPREC_SAMPLE_INTERVAL: exact, and the default
};

void PrintTo(const Param& param, std::ostream* os) { *os << "interval " << param.interval; }

class DormantAttach : public ReliabilityTest, public ::testing::WithParamInterface<Param> {};

TEST_P(DormantAttach, PreAttachBlocksFreedFromManyThreadsBreakNothing) {
  e2e::BackgroundOptions options;
  options.argv = e2e::HeaprecArgv(dir(),
                                  {"--dormant", "--dump-signal", "SIGUSR2", "--sample-interval",
                                   GetParam().interval, "--no-symbolize", "--top", "0"},
                                  {WL_DORMANT, "8", "100000"});
  options.cwd = dir();
  options.stdin_pipe = true;
  options.guard_seconds = 120;
  e2e::BackgroundProcess process(options);
  pid_t pid = process.WaitUntilReady();
  ASSERT_GT(pid, 0) << process.Stderr();
  // The attach lands while eight threads reallocate and free the pool: no ordering is promised.
  process.Send("free_pre");
  TempDir cwd;
  RunResult attach =
      e2e::RunProgram({HEAPREC_BIN, "attach", std::to_string(pid)}, cwd.path(), {}, 60);
  EXPECT_EQ(attach.status, 0) << attach.err;
  ASSERT_FALSE(process.WaitForLine("done free_pre").empty()) << process.Stderr();
  process.Send("churn");
  ASSERT_FALSE(process.WaitForLine("done churn").empty()) << process.Stderr();
  process.Send("exit");
  RunResult result = process.Wait();
  ASSERT_EQ(result.status, 0) << Describe(result) << result.err;
  EXPECT_EQ(Lines(result.out).back(), "bye");
  ProfileSet profiles = ReadProfiles(dir());
  ASSERT_EQ(profiles.files.size(), 1u);
  const Profile& profile = profiles.ExitProfile(pid);
  EXPECT_EQ(CommentValue(profile, "missed_frees"), 0);
  EXPECT_EQ(CommentValue(profile, "attached"), 1);
  EXPECT_EQ(SiteValues(profile, "pre_attach_hold"), Values{});
  EXPECT_EQ(SiteValues(profile, "pre_attach_pool"), Values{});
  EXPECT_EQ(SiteValues(profile, "free_share").inuse_objects, 0);  // all freed again
}

INSTANTIATE_TEST_SUITE_P(Intervals, DormantAttach, ::testing::Values(Param{"1"}, Param{"512K"}),
                         [](const ::testing::TestParamInfo<Param>& info) {
                           return info.param.interval == "1" ? std::string("Exact")
                                                             : std::string("Default");
                         });

}  // namespace
}  // namespace heaprec::reliability
