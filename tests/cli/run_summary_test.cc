// `heaprec run`'s end-of-run summary for a program in the RAII style (raii_workload.cc): it frees
// everything before it exits, so its final profile holds 0 B and the summary says so and reports
// the peak profile instead, whose first row is the function that allocated the blocks, at the
// line of the call. Exact sampling (--sample-interval 1): the bytes are known.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "e2e_util.h"
#include "profile/pprof_reader.h"

namespace heaprec::e2e {
namespace {

// The line of raii_workload.cc that allocates the blocks.
int BlockLine() {
  std::ifstream source(RAII_WORKLOAD_SOURCE);
  std::string line;
  for (int n = 1; std::getline(source, line); ++n) {
    if (line.find("std::make_unique<char[]>(kBlockSize)") != std::string::npos) return n;
  }
  return 0;
}

TEST(RunSummaryTest, FinalProfileOfARaiiProgramHoldsNothingSoThePeakIsReported) {
  TempDir dir;
  RunResult run = HeaprecRun(dir.path(), {"--sample-interval", "1"}, {RAII_WORKLOAD, "64"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, "loaded 64 blocks, sum 2016\n");
  std::vector<std::string> finals = ListProfiles(dir.path()),
                           peaks = ListProfiles(dir.path(), true);
  ASSERT_EQ(finals.size(), 1u) << run.err;
  ASSERT_EQ(peaks.size(), 1u) << run.err;

  // "heaprec: the final profile of pid N holds 0 B; its peak profile PATH holds X MiB"
  std::vector<std::string> lines = Lines(run.err);
  size_t pointer = lines.size();
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("heaprec: the final profile of pid ", 0) == 0) pointer = i;
  }
  ASSERT_LT(pointer, lines.size()) << run.err;
  const std::string& line = lines[pointer];
  EXPECT_NE(line.find(" holds 0 B; its peak profile " + peaks[0] + " holds "), std::string::npos)
      << line;
  EXPECT_TRUE(line.ends_with(" MiB")) << line;
  EXPECT_EQ(TotalValues(ReadProfileFile(finals[0])).inuse_space, 0);
  // The peak copy is taken as the heap grows past 1.1x the last one: at least 4 MiB / 1.1.
  int64_t peak_bytes = TotalValues(ReadProfileFile(peaks[0])).inuse_space;
  EXPECT_GE(peak_bytes, static_cast<int64_t>(64 * 65536 / 1.1));
  EXPECT_LE(peak_bytes, 64 * 65536 + 4096);

  // Then the peak profile's report, not the final one's, its first row the allocating function.
  ASSERT_LT(pointer + 9, lines.size()) << run.err;
  EXPECT_EQ(lines[pointer + 1], "");
  EXPECT_EQ(lines[pointer + 2], "File: " + peaks[0]);
  size_t header = pointer + 2;
  while (header < lines.size() && lines[header].find("  function") == std::string::npos) ++header;
  ASSERT_LT(header + 1, lines.size()) << run.err;
  const std::string& first_row = lines[header + 1];
  ASSERT_GT(BlockLine(), 0);
  EXPECT_TRUE(first_row.ends_with("  100.0%  raii::LoadBlocks raii_workload.cc:" +
                                  std::to_string(BlockLine())))
      << run.err;
  EXPECT_EQ(run.err.find("File: " + finals[0]), std::string::npos) << run.err;
  // Neither the allocator nor the library's make_unique is a row.
  EXPECT_EQ(run.err.find("operator new"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("std::make_unique"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace heaprec::e2e
