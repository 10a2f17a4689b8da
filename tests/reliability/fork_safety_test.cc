// fork() and the unwinders: a multithreaded program forks while its other threads are inside the
// unwinder (which holds its own locks and the dynamic loader's while it looks up unwind tables), so
// children and grandchildren start with those locks taken by threads they do not have; and threads
// call pthread_getattr_np, which reallocs while holding the calling thread's own lock, under each
// unwinder (the frame-pointer one asks for the thread's stack bounds itself).
//
// Both deadlock rather than crash, so a hang guard bounds every run, and the fork scenario runs
// several times in a row: whether a fork lands inside the unwinder is a matter of timing.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "reliability_util.h"

namespace heaprec::reliability {
namespace {

// Each run takes about a second; a deadlocked one never ends.
constexpr int kGuardSeconds = 60;

// tests/reliability/CMakeLists.txt builds every program of REL_PROGRAMS into one directory.
std::string Program(const std::string& name) {
  return (std::filesystem::path(REL_PROCS).parent_path() / name).string();
}

// Profiles in `profiles` with samples of `size` bytes, and how many of those add up to `expected`.
struct SizeCount {
  int with_size = 0;
  int exact = 0;
};
SizeCount CountSize(const ProfileSet& profiles, int64_t size, const Values& expected) {
  SizeCount count;
  for (const ProfileFile& file : profiles.files) {
    Values v = SiteValuesOfSize(file.profile, "", size);
    if (v == Values{}) continue;
    ++count.with_size;
    count.exact += v == expected;
  }
  return count;
}

// rel_fork_stress with its defaults: 4 threads churning through 4096 call sites while the main
// thread forks 40 children 2 ms apart; the 20 even children fork a grandchild. 61 processes.
constexpr size_t kForkProcesses = 1 + 40 + 20;
const char kForkStressOut[] = "fork_stress threads=4 children=40 ok=40 grandchildren=20 ok=20\n";

// Runs in a row: more at the default interval, where samples (so forks that land inside the
// unwinder) are rarer and a run is cheap.
struct ForkParam {
  std::string interval;  // HEAPREC_SAMPLE_INTERVAL, "" for the default
  int repetitions;
};
void PrintTo(const ForkParam& param, std::ostream* os) {
  *os << "interval \"" << param.interval << "\", " << param.repetitions << " runs";
}
class ForkStressTest : public ReliabilityTest, public ::testing::WithParamInterface<ForkParam> {};

// Every process, however its fork landed, allocates, exits with its own status and writes its exit
// profile; the parent sees every status it expects. Several runs in a row, stopping at the first
// that fails.
TEST_P(ForkStressTest, EveryProcessExitsAndWritesItsProfile) {
  const auto& [interval, repetitions] = GetParam();
  const std::vector<std::string> program = {Program("rel_fork_stress")};
  EnvChanges env;
  if (!interval.empty()) env["HEAPREC_SAMPLE_INTERVAL"] = interval;

  std::string plain_dir = dir_ / "plain";
  std::filesystem::create_directories(plain_dir);
  RunResult plain = RunGuarded(program, plain_dir, {}, kGuardSeconds);
  ASSERT_EQ(plain.status, 0) << "unprofiled run\n" << Describe(plain);
  ASSERT_EQ(plain.out, kForkStressOut);
  ASSERT_EQ(plain.err, "");

  for (int rep = 1; rep <= repetitions; ++rep) {
    SCOPED_TRACE("repetition " + std::to_string(rep) + " of " + std::to_string(repetitions));
    std::string run_dir = dir_ / ("run" + std::to_string(rep));
    std::filesystem::create_directories(run_dir);
    RunResult run = PreloadRunGuarded(run_dir, program, env, kGuardSeconds);
    if (run.status == kHung) {
      ADD_FAILURE() << "profiled run hung: some process never exited ("
                    << e2e::ListProfiles(run_dir).size() << " of " << kForkProcesses
                    << " profiles written)\n"
                    << Describe(run);
      break;
    }
    EXPECT_EQ(run.status, plain.status) << Describe(run);
    EXPECT_EQ(run.out, plain.out) << "profiling changed the program's stdout";
    EXPECT_EQ(run.err, plain.err) << "profiling changed the program's stderr";
    ProfileSet profiles = ReadProfiles(run_dir);
    EXPECT_EQ(profiles.exit_profiles.size(), kForkProcesses) << Describe(run);
    EXPECT_EQ(profiles.Count("exit"), static_cast<int>(kForkProcesses));
    EXPECT_EQ(profiles.files.size(), kForkProcesses);
    if (interval == "1") {
      // Each process's own allocations, exactly (sizes nothing else in the program uses): the
      // grandchildren's 10 x 5000 bytes (5 kept), the 30 large children's 20 x 3000 (10 kept), the
      // 10 small children's single 24-byte block. Grandchildren are forked before their parent
      // allocates, so nobody inherits these.
      SizeCount grandchildren = CountSize(profiles, 5000, {10, 50000, 5, 25000});
      EXPECT_EQ(grandchildren.with_size, 20);
      EXPECT_EQ(grandchildren.exact, 20);
      SizeCount large = CountSize(profiles, 3000, {20, 60000, 10, 30000});
      EXPECT_EQ(large.with_size, 30);
      EXPECT_EQ(large.exact, 30);
      SizeCount small = CountSize(profiles, 24, {1, 24, 1, 24});
      EXPECT_EQ(small.with_size, 10);
      EXPECT_EQ(small.exact, 10);
    }
    if (HasFailure()) break;
  }
}

INSTANTIATE_TEST_SUITE_P(Intervals, ForkStressTest,
                         ::testing::Values(ForkParam{"", 8}, ForkParam{"4096", 5},
                                           ForkParam{"1", 5}),
                         [](const ::testing::TestParamInfo<ForkParam>& info) {
                           const std::string& interval = info.param.interval;
                           return interval.empty()  ? std::string("default")
                                  : interval == "1" ? std::string("exact")
                                                    : "interval" + interval;
                         });

// rel_getattr with its defaults: 1000 threads, 100 at a time, each calling pthread_getattr_np 64
// times before anything else, then allocating 8 blocks of 2000 + thread % 50 bytes.
const char kGetattrOut[] = "getattr threads=1000 calls=64000 stack_ok=64000 main_ok=64\n";

using GetattrParam = std::tuple<std::string, bool>;  // HEAPREC_UNWIND, exact
class GetattrTest : public ReliabilityTest, public ::testing::WithParamInterface<GetattrParam> {};

// A sampled allocation inside pthread_getattr_np (the realloc it makes while holding the thread's
// lock) must not make the unwinder ask for that thread's attributes again.
TEST_P(GetattrTest, ThreadsReadTheirOwnStackUnderEveryUnwinder) {
  const auto& [unwinder, exact] = GetParam();
  EnvChanges env = {{"HEAPREC_UNWIND", unwinder}};
  if (exact) env["HEAPREC_SAMPLE_INTERVAL"] = "1";
  RunResult run = CompareWithPreload(env, {Program("rel_getattr")}, 0, kGuardSeconds);
  EXPECT_EQ(run.out, kGetattrOut);
  ProfileSet profiles = ReadProfiles(dir());
  ASSERT_EQ(profiles.exit_profiles.size(), 1u) << Describe(run);
  ASSERT_EQ(profiles.files.size(), 1u);
  if (exact) {
    // Every thread's 8 blocks, all freed: 20 threads for each size 2000..2049.
    const Profile& profile = profiles.files[0].profile;
    for (int64_t size = 2000; size < 2050; ++size) {
      EXPECT_EQ(SiteValuesOfSize(profile, "", size), (Values{160, 160 * size, 0, 0}))
          << "size " << size;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Unwinders, GetattrTest,
                         ::testing::Combine(::testing::Values("fp", "dwarf"), ::testing::Bool()),
                         [](const ::testing::TestParamInfo<GetattrParam>& info) {
                           return std::get<0>(info.param) +
                                  (std::get<1>(info.param) ? "_exact" : "_default");
                         });

}  // namespace
}  // namespace heaprec::reliability
