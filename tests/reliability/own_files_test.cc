// What a program's own descriptor bugs do to heaprec's files: nothing. heaprec's descriptors sit
// high (core/own_descriptors.h), out of reach of the low numbers programs close and reuse, and a
// number the program takes over anyway is found out before heaprec writes to it or closes it: the
// program's file keeps only the program's bytes, and the profile is written again on a new
// descriptor. The moment is made deterministically: rel_slow_rename.so holds the first peak write
// half-way while programs/rel_fd_thief.c closes descriptors.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "reliability_util.h"

namespace heaprec::reliability {
namespace {

constexpr int64_t kHeld = 128 * 64 * 1024;  // rel_fd_thief's site_hold

class OwnFilesTest : public ReliabilityTest {
 protected:
  // rel_fd_thief in `mode` under heaprec run, exact, with the first peak write held at `hold`.
  RunResult Run(const std::string& mode, const std::string& hold) {
    return HeaprecRunGuarded(dir(), {"--sample-interval", "1", "--top", "0"},
                             {REL_FD_THIEF, dir(), mode},
                             {{"LD_PRELOAD", REL_SLOW_RENAME},
                              {"REL_SLOW_RENAME_DIR", dir()},
                              {"REL_SLOW_DISK_HOLD", hold}});
  }

  std::string OwnLog() const {
    std::ifstream in(dir() + "/own.log", std::ios::binary);
    std::stringstream content;
    content << in.rdbuf();
    return content.str();
  }

  // The one peak profile, complete: it holds the program's heap at its peak.
  void ExpectCompletePeakProfile(const RunResult& run) {
    std::vector<std::string> peaks = e2e::ListProfiles(dir(), /*peak=*/true);
    ASSERT_EQ(peaks.size(), 1u) << Describe(run);
    std::optional<ProfileFile> file = ReadValidProfile(peaks[0]);
    ASSERT_TRUE(file.has_value()) << Describe(run);
    EXPECT_EQ(CommentText(file->profile, "reason"), "peak");
    EXPECT_GE(SiteValues(file->profile, "site_hold").inuse_space, static_cast<int64_t>(kHeld / 1.1))
        << Describe(run);
  }
};

// bash 5.2 closes 3 and 4 twice in $(...): heaprec's descriptors are not among the low numbers.
TEST_F(OwnFilesTest, ClosingTheLowNumbersLeavesHeaprecsFileAlone) {
  RunResult run = Run("low", "write");
  ASSERT_EQ(run.status, 0) << Describe(run);
  EXPECT_EQ(OwnLog(), "own line 1\nown line 2\n") << "heaprec wrote into the program's file";
  EXPECT_EQ(run.err.find("Bad file descriptor"), std::string::npos) << run.err;
  ExpectCompletePeakProfile(run);
}

// A program that closes every descriptor and reuses the numbers: heaprec's check finds its number
// taken over, writes nothing into the program's file, leaves the program's descriptor open, and
// writes the profile again on a new one.
TEST_F(OwnFilesTest, ANumberTakenOverIsNeitherWrittenNorClosed) {
  RunResult run = Run("reuse", "fstat");
  ASSERT_EQ(run.status, 0) << Describe(run);
  EXPECT_EQ(OwnLog(), "own line 1\nown line 2\n") << "heaprec wrote into the program's file";
  std::string out = run.out;
  ASSERT_EQ(out.rfind("kept=", 0), 0u) << out;
  int kept = 0, dups = 0;
  ASSERT_EQ(std::sscanf(out.c_str(), "kept=%d of %d", &kept, &dups), 2) << out;
  EXPECT_GE(dups, 1) << "the program took over no number of heaprec's";
  EXPECT_EQ(kept, dups) << "heaprec closed a descriptor of the program's";
  ExpectCompletePeakProfile(run);
}

// %e is the program's name at start-up, not whatever the program later writes over argv[0] (nginx
// and redis write their process titles there): the final and the peak profile share the name, and
// a title as long as the whole command line does not make a name too long to create.
TEST_F(OwnFilesTest, ARewrittenProcessTitleDoesNotRenameTheProfiles) {
  std::vector<std::string> program = {REL_RETITLE};
  for (int i = 0; i < 40; ++i) program.push_back(std::string(20, 'x'));  // an 800-byte title
  RunResult run = RunGuarded(program, dir(),
                             {{"LD_PRELOAD", HEAPREC_LIB},
                              {"HEAPREC_OUTPUT", dir() + "/%e.%p.pb.gz"},
                              {"HEAPREC_SAMPLE_INTERVAL", "1"}});
  ASSERT_EQ(run.status, 0) << Describe(run);
  EXPECT_EQ(run.err, "");
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir())) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  ASSERT_EQ(names.size(), 2u) << ::testing::PrintToString(names);
  EXPECT_TRUE(std::regex_match(names[0], std::regex(R"(rel_retitle\.[0-9]+\.pb\.gz)"))) << names[0];
  EXPECT_TRUE(std::regex_match(names[1], std::regex(R"(rel_retitle\.[0-9]+\.peak\.pb\.gz)")))
      << names[1];
}

}  // namespace
}  // namespace heaprec::reliability
