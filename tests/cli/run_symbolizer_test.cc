// `heaprec run` symbolizes the profiles of the processes that have ended while the program still
// runs (run_symbolizer.h), and at the end whatever is left, or was written again since. The
// program is a shell that runs run_probe (tests/e2e/programs/run_probe.c: `peak BYTES` writes a
// final and a peak profile) and then waits for the test on its stdin.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "e2e_util.h"
#include "profile/pprof_reader.h"

namespace heaprec::e2e {
namespace {

// Far beyond what symbolizing two small profiles takes: only a profile never symbolized reaches it.
constexpr double kSymbolizedWithinSeconds = 20;

bool Symbolized(const std::string& path) {
  try {
    return !profile::ReadProfileFile(path).functions.empty();
  } catch (const std::exception&) {
    return false;  // being replaced right now
  }
}

// The profiles in `dir`, final and peak ones.
std::vector<std::string> AllProfiles(const std::string& dir) {
  std::vector<std::string> all = ListProfiles(dir), peaks = ListProfiles(dir, true);
  all.insert(all.end(), peaks.begin(), peaks.end());
  return all;
}

// Waits until `dir` holds at least `count` profiles and all of them are symbolized.
bool AllSymbolized(const std::string& dir, size_t count) {
  for (double deadline = MonotonicSeconds() + kSymbolizedWithinSeconds;
       MonotonicSeconds() < deadline; usleep(20 * 1000)) {
    std::vector<std::string> profiles = AllProfiles(dir);
    bool all = profiles.size() >= count;
    for (const std::string& path : profiles) all = all && Symbolized(path);
    if (all) return true;
  }
  return false;
}

// Exact sampling: the probe's heap passes 64 KiB, so it writes a peak profile, every time.
const std::vector<std::string> kExact = {"--sample-interval", "1", "--top", "0"};

// `heaprec run -- sh -c 'run_probe peak 1 MiB; echo ran; read line'`, its stdin a pipe.
BackgroundOptions ShellRunningTheProbe(const std::string& dir) {
  BackgroundOptions options;
  options.argv = HeaprecArgv(
      dir, kExact,
      {"/bin/sh", "-c", std::string(RUN_PROBE) + " peak 1048576 && echo ran && read line"});
  options.cwd = dir;
  options.stdin_pipe = true;
  return options;
}

// The probe's final and peak profiles are symbolized while the shell still waits, where they used
// to wait for the program's end like every other profile.
TEST(RunSymbolizerTest, ProfilesOfEndedProcessesAreSymbolizedWhileTheProgramRuns) {
  TempDir dir;
  BackgroundProcess run(ShellRunningTheProbe(dir.path()));
  ASSERT_NE(run.WaitForLine("ran"), "") << run.Stderr();
  EXPECT_TRUE(AllSymbolized(dir.path(), 2)) << "the probe's profiles, while the shell runs";
  run.Send("go");
  RunResult result = run.Wait();
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_GE(AllProfiles(dir.path()).size(), 3u) << result.err;  // and the shell's own
  EXPECT_TRUE(AllSymbolized(dir.path(), 3));
}

// The names in `dir` that start with `prefix` (by default, with a dot).
std::vector<std::string> HiddenFiles(const std::string& dir, const std::string& prefix = ".") {
  std::vector<std::string> hidden;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0) hidden.push_back(name);
  }
  return hidden;
}

// The rewrite keeps each replaced file's inode for the next one (base/recycling_writer.h) instead
// of freeing it: while the program runs the output directory holds one spare of the rewrite's
// (beside the ended probe's heap record, parked as a spare of its own), and at the end nothing but
// the profiles.
TEST(RunSymbolizerTest, TheRewriteKeepsOneSpareAndLeavesOnlyTheProfiles) {
  TempDir dir;
  BackgroundProcess run(ShellRunningTheProbe(dir.path()));
  ASSERT_NE(run.WaitForLine("ran"), "") << run.Stderr();
  ASSERT_TRUE(AllSymbolized(dir.path(), 2));
  std::vector<std::string> hidden = HiddenFiles(dir.path(), ".heaprec-spare.");
  EXPECT_EQ(hidden.size(), 1u) << "the probe's two profiles rewritten by one follower: "
                               << testing::PrintToString(HiddenFiles(dir.path()));
  run.Send("go");
  RunResult result = run.Wait();
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_TRUE(HiddenFiles(dir.path()).empty());
  std::vector<std::string> profiles = AllProfiles(dir.path());
  std::vector<std::string> others;  // than profiles and the test's own "out" and "err"
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    std::string name = entry.path().filename().string();
    bool profile =
        std::find(profiles.begin(), profiles.end(), entry.path().string()) != profiles.end();
    if (!profile && name != "out" && name != "err") others.push_back(name);
  }
  EXPECT_TRUE(others.empty()) << testing::PrintToString(others);
  EXPECT_TRUE(AllSymbolized(dir.path(), 3));
}

// A file symbolized during the run and written again afterwards (another process writing the same
// name: a pid used again) is no longer the file that was rewritten: it is symbolized again at the
// end. The test stands in for that process, copying an unsymbolized profile over the probe's.
TEST(RunSymbolizerTest, AProfileWrittenAgainAfterItWasSymbolizedIsSymbolizedAtTheEnd) {
  TempDir other;
  RunResult unsymbolized =
      HeaprecRun(other.path(), {"--no-symbolize", "--sample-interval", "1", "--top", "0"},
                 {RUN_PROBE, "peak", "1048576"});
  ASSERT_EQ(unsymbolized.status, 0) << unsymbolized.err;
  std::vector<std::string> source = ListProfiles(other.path());
  ASSERT_EQ(source.size(), 1u);
  ASSERT_FALSE(Symbolized(source[0]));

  TempDir dir;
  BackgroundProcess run(ShellRunningTheProbe(dir.path()));
  ASSERT_NE(run.WaitForLine("ran"), "") << run.Stderr();
  ASSERT_TRUE(AllSymbolized(dir.path(), 2));
  std::vector<std::string> probe = ListProfiles(dir.path());
  ASSERT_EQ(probe.size(), 1u);
  std::filesystem::copy_file(source[0], probe[0] + ".new");
  std::filesystem::rename(probe[0] + ".new", probe[0]);
  ASSERT_FALSE(Symbolized(probe[0]));
  run.Send("go");
  RunResult result = run.Wait();
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_TRUE(Symbolized(probe[0])) << "written again after it was symbolized, left as written";
}

// Whether a gzip file is smaller than what it holds (its last four bytes, ISIZE).
bool Compressed(const std::string& path) {
  std::string bytes = ReadFile(path);
  if (bytes.size() < 18) return false;
  uint32_t holds = 0;
  for (int i = 0; i < 4; ++i) {
    holds |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[bytes.size() - 4 + i]))
             << (8 * i);
  }
  return bytes.size() < holds;
}

// Symbolizing, heaprec run has the library store its profiles uncompressed in their gzip files
// (HEAPREC_UNCOMPRESSED: no deflate in the program, no inflate in heaprec), and writes each one
// back compressed. The variable without the rewrite (--no-symbolize) leaves them stored.
TEST(RunSymbolizerTest, TheLibraryStoresAndTheRewriteCompresses) {
  TempDir stored;
  RunResult left = HeaprecRun(stored.path(), {"--no-symbolize", "--sample-interval", "1"},
                              {RUN_PROBE, "peak", "1048576"}, {{"HEAPREC_UNCOMPRESSED", "1"}});
  ASSERT_EQ(left.status, 0) << left.err;
  ASSERT_EQ(AllProfiles(stored.path()).size(), 2u);
  for (const std::string& path : AllProfiles(stored.path())) {
    EXPECT_FALSE(Compressed(path)) << path;
    EXPECT_FALSE(Symbolized(path)) << path;
  }
  TempDir dir;
  RunResult run = HeaprecRun(dir.path(), kExact, {RUN_PROBE, "peak", "1048576"});
  ASSERT_EQ(run.status, 0) << run.err;
  ASSERT_EQ(AllProfiles(dir.path()).size(), 2u);
  for (const std::string& path : AllProfiles(dir.path())) {
    EXPECT_TRUE(Compressed(path)) << path;
    EXPECT_TRUE(Symbolized(path)) << path;
  }
}

}  // namespace
}  // namespace heaprec::e2e
