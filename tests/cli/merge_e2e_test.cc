// Many profiles as one, end to end: wl_children forks N children under `heaprec run`, each writing
// its own profile (and a peak profile beside it); `heaprec report DIR` merges each process's last
// profile, and its total is the sum of the children's (exact mode: to the byte; sampled: within the
// merged 95% interval); `--by-process` lists every process.
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "e2e_util.h"

namespace heaprec::e2e {
namespace {

constexpr int kChildren = 4;
constexpr int kBlocks = 50;
constexpr int64_t kSize = 100000;
constexpr int64_t kHeld = int64_t{kChildren} * kBlocks * kSize;

// The number after `"key": ` in heaprec's JSON, or -1.
int64_t JsonInt(const std::string& json, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(json, m, std::regex("\"" + key + "\": (-?[0-9]+)"))) return -1;
  return std::strtoll(m[1].str().c_str(), nullptr, 10);
}

class MergeE2eTest : public ::testing::Test {
 protected:
  // Runs wl_children under heaprec with `flags`; its profiles are in dir_.
  void Run(const std::vector<std::string>& flags) {
    RunResult run = HeaprecRun(
        dir_.path(), flags,
        {WL_CHILDREN, std::to_string(kChildren), std::to_string(kBlocks), std::to_string(kSize)});
    ASSERT_EQ(run.status, 0) << run.err;
    // The parent and the children: one final profile each.
    ASSERT_EQ(ListProfiles(dir_.path()).size(), kChildren + 1u) << run.err;
  }

  RunResult Report(const std::vector<std::string>& flags) {
    std::vector<std::string> argv = {HEAPREC_BIN, "report", "--format", "json"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.push_back(dir_.path());
    return RunProgram(argv, dir_.path());
  }

  TempDir dir_;
};

TEST_F(MergeE2eTest, ExactTotalIsTheSumOfTheChildren) {
  Run({"--sample-interval", "1"});
  RunResult r = Report({});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(JsonInt(r.out, "total"), kHeld) << r.out;
  // One merged sample per stack: the children's identical stacks are summed, not listed apart.
  EXPECT_NE(r.out.find("\"function\": \"hold\""), std::string::npos) << r.out;

  RunResult by = Report({"--by-process"});
  ASSERT_EQ(by.status, 0) << by.err;
  EXPECT_EQ(JsonInt(by.out, "process_count"), kChildren + 1) << by.out;
  EXPECT_EQ(JsonInt(by.out, "total"), kHeld) << by.out;
  // Each child holds its part; the parent nothing.
  std::regex row("\"value\": " + std::to_string(kBlocks * kSize));
  EXPECT_EQ(std::distance(std::sregex_iterator(by.out.begin(), by.out.end(), row),
                          std::sregex_iterator()),
            kChildren)
      << by.out;
  EXPECT_NE(by.out.find("\"process\": \"pid "), std::string::npos) << by.out;
}

TEST_F(MergeE2eTest, SampledTotalIsWithinTheMergedInterval) {
  Run({"--sample-interval", "65536", "--seed", "11"});
  RunResult r = Report({});
  ASSERT_EQ(r.status, 0) << r.err;
  int64_t low = JsonInt(r.out, "total_low"), high = JsonInt(r.out, "total_high");
  ASSERT_GT(high, low) << r.out;
  EXPECT_LE(low, kHeld) << r.out;
  EXPECT_GE(high, kHeld) << r.out;
}

TEST_F(MergeE2eTest, ProfilesOfTwoIntervalsAreRefused) {
  Run({"--sample-interval", "1"});
  TempDir other;
  RunResult run =
      HeaprecRun(other.path(), {"--sample-interval", "65536"}, {WL_CHILDREN, "1", "1", "1000"});
  ASSERT_EQ(run.status, 0) << run.err;
  RunResult r = RunProgram({HEAPREC_BIN, "report", dir_.path(), other.path()}, dir_.path());
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.err.find("cannot merge"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("65536"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace heaprec::e2e
