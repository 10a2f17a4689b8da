// The peak profile, which the library rewrites as the estimated live heap grows, and the other
// profiles a growing heap leaves: SIGKILL at the peak (the peak profile already on disk, exact and
// at the default interval), the crash profile when memory runs out (written from the reserve each
// peak write sizes), a slow peak write that must not hide the next peak, and HEAPREC_DUMP_ABOVE's
// profile at each multiple. The programs are programs/rel_endings.cc (endings_util.h: how the
// tests drive it) and programs/rel_peak_burst.c. The only timed wait is the one the behaviour is
// about: the peak profile is rewritten at most once per second, so the SIGKILL tests wait 2 s
// after the program is ready.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "endings_util.h"

namespace heaprec::reliability {
namespace {

void SleepSeconds(double seconds) { usleep(static_cast<useconds_t>(seconds * 1e6)); }

// The names in `dir`, one a line: for messages.
std::string Listing(const std::string& dir) {
  std::string names = "files in " + dir + ":\n";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names += "  " + entry.path().filename().string() + "\n";
  }
  return names;
}

// SIGKILL at the peak: nothing can run, but the peak profile is already on disk. It is rewritten
// whenever the estimated live heap grew 10% over the last written copy (above a 64 KiB floor), at
// most once per second; so 2 s after the program reached its peak (said "ready") the file holds
// the last copy taken, which is at least 1/1.1 (> 90%) of the live heap.

constexpr int64_t kPeakBlocks = 2000, kPeakBlockSize = 32 * 1024;
constexpr int64_t kPeakBytes = kPeakBlocks * kPeakBlockSize;  // 62.5 MiB at site_peak
constexpr double kPeakWait = 2.0;  // > the 1 s spacing of peak writes, with a margin

// Runs `argv` (rel_endings peak, plain, preloaded or under heaprec run) in `dir`, waits for its
// "ready PID", then `wait` seconds, then SIGKILLs the program.
RunResult KillAtThePeak(const std::vector<std::string>& argv, const std::string& dir,
                        const EnvChanges& env, double wait, pid_t* program_pid) {
  BackgroundProcess process(Options(argv, dir, env));
  pid_t pid = process.WaitUntilReady();
  EXPECT_GT(pid, 0) << "never said ready";
  if (program_pid != nullptr) *program_pid = pid;
  if (pid > 0) {
    SleepSeconds(wait);
    EXPECT_EQ(kill(pid, SIGKILL), 0);
  }
  return process.Wait();
}

TEST_F(EndingsTest, SigkillAtThePeakExact) {
  const std::vector<std::string> program = {REL_ENDINGS, "peak"};
  RunResult plain = KillAtThePeak(program, RunDirectory("plain"), {}, 0, nullptr);
  ASSERT_TRUE(WIFSIGNALED(plain.wait_status) && WTERMSIG(plain.wait_status) == SIGKILL)
      << DescribeEnding(plain);
  for (bool heaprec_run : {false, true}) {
    SCOPED_TRACE(heaprec_run ? "heaprec run" : "preloaded");
    std::string dir = RunDirectory(heaprec_run ? "heaprec" : "preload");
    pid_t pid = -1;
    RunResult run = heaprec_run
                        ? KillAtThePeak(UnderHeaprec(dir, program, {"--sample-interval", "1"}), dir,
                                        {}, kPeakWait, &pid)
                        : KillAtThePeak(program, dir, PreloadEnv(dir), kPeakWait, &pid);
    if (heaprec_run) {
      EXPECT_EQ(run.status, 137) << DescribeEnding(run);
      EXPECT_TRUE(Contains(run.err, "heaprec: the program was killed by signal 9 (SIGKILL)\n"))
          << run.err;
    } else {
      EXPECT_EQ(run.wait_status, plain.wait_status) << DescribeEnding(run);
      EXPECT_EQ(run.err, "");
      SymbolizeAll(dir);
    }
    EXPECT_EQ(WithoutPids(run.out), WithoutPids(plain.out));
    // heaprec run writes the heap at death from the heap record; preloaded alone, the record stays
    // for `heaprec recover` (heap_record_test.cc). Exact sampling: the death is the peak, exactly.
    ProfileSet profiles = ReadProfiles(dir);
    if (heaprec_run) {
      ASSERT_EQ(profiles.final_profiles.count(pid), 1u) << Listing(dir) << DescribeEnding(run);
      const ProfileFile& killed = profiles.files[profiles.final_profiles.at(pid)];
      EXPECT_EQ(killed.reason, "killed");
      EXPECT_EQ(SiteValues(killed.profile, "site_peak"),
                (Values{kPeakBlocks, kPeakBytes, kPeakBlocks, kPeakBytes}));
    } else {
      EXPECT_TRUE(profiles.files.empty()) << "SIGKILL leaves no final profile";
      EXPECT_TRUE(std::filesystem::exists(dir + "/p." + std::to_string(pid) + ".record"))
          << Listing(dir);
    }
    std::vector<ProfileFile> peaks = ReadPeakProfiles(dir);
    ASSERT_EQ(peaks.size(), 1u) << Listing(dir) << DescribeEnding(run);
    const ProfileFile& peak = peaks[0];
    EXPECT_EQ(peak.pid, pid);
    EXPECT_EQ(peak.path, dir + "/p." + std::to_string(pid) + ".peak.pb.gz");
    Values site = SiteValues(peak.profile, "site_peak");
    EXPECT_EQ(site.inuse_space, site.inuse_objects * kPeakBlockSize) << site;
    EXPECT_GE(site.inuse_space * 10, kPeakBytes * 9) << site << ": less than 90% of the peak";
    EXPECT_LE(site.inuse_space, kPeakBytes) << site;
  }
}

// Out of memory: after its peak, the program caps its address space at what it maps, allocates
// until malloc fails and aborts. The crash profile still gets written, exactly, from the memory
// heaprec reserved beforehand (sized at each peak write), since no new mapping is possible.
TEST_F(EndingsTest, CrashProfileWhenMemoryIsExhausted) {
  const std::vector<std::string> program = {REL_ENDINGS, "peak-oom"};
  auto run_to_abort = [&](const std::string& dir, const EnvChanges& env, double wait) {
    BackgroundProcess process(Options(program, dir, env));
    EXPECT_GT(process.WaitUntilReady(), 0) << "never said ready";
    SleepSeconds(wait);  // the peak copy and the reserve are written at most once per second
    process.Send("go");
    return process.Wait();
  };
  RunResult plain = run_to_abort(RunDirectory("plain"), {}, 0);
  ASSERT_TRUE(WIFSIGNALED(plain.wait_status) && WTERMSIG(plain.wait_status) == SIGABRT)
      << DescribeEnding(plain);
  std::string dir = RunDirectory("preload");
  RunResult run = run_to_abort(dir, PreloadEnv(dir), kPeakWait);
  EXPECT_EQ(run.wait_status, plain.wait_status) << DescribeEnding(run);
  EXPECT_EQ(WithoutPids(run.out), WithoutPids(plain.out));
  EXPECT_EQ(run.err, plain.err);
  SymbolizeAll(dir);
  ProfileSet profiles = ReadProfiles(dir);
  ASSERT_EQ(profiles.final_profiles.size(), 1u) << Listing(dir) << DescribeEnding(run);
  const ProfileFile& crash = profiles.files[profiles.final_profiles.begin()->second];
  EXPECT_EQ(crash.reason, "crash");
  EXPECT_EQ(SiteValues(crash.profile, "site_peak"),
            (Values{kPeakBlocks, kPeakBytes, kPeakBlocks, kPeakBytes}));
}

// The same at the default interval (512 KiB), with a fixed seed. The bound: an n-byte allocation
// is sampled with probability p = 1 - exp(-(n + 1) / T) and counted n / p
// (tests/e2e/sampled_test.cc derives it); for N blocks the estimate X of their bytes has Var(X) = N
// n^2 (1 - p) / p. Here n = 32 KiB, T = 512 KiB: p = 0.0606, each sample counts 528 KiB, ~121
// samples expected, and sigma = 5.77 MB on 65.5 MB (8.8%). The final estimate is within 5 sigma of
// the truth (a deviation beyond that has probability ~6e-7; with the fixed seed a pass stays a
// pass). The peak copy on disk is at least 1/1.1 of the estimate at its peak: estimated total >=
// (truth - 5 sigma) / 1.1. And single-threaded runs are deterministic under a fixed seed, so the
// same program run to a normal exit gives the very estimate the killed one reached: the peak copy
// holds between 1/1.1 of it and all of it.
TEST_F(EndingsTest, SigkillAtThePeakDefaultInterval) {
  const EnvChanges seed = {{"HEAPREC_SEED", "20240601"}};
  const double interval = 512 * 1024;
  const double sigma = std::sqrt(e2e::SampledBytesVariance(kPeakBlocks, kPeakBlockSize, interval));
  const double k = 5, rounding = 2;

  // The estimate at the peak, from a run that exits normally right there.
  std::string exit_dir = RunDirectory("exit");
  RunResult exited = BackgroundProcess(Options({REL_ENDINGS, "peak", "exit"}, exit_dir,
                                               PreloadEnv(exit_dir, false, seed)))
                         .Wait();
  ASSERT_EQ(exited.status, 0) << DescribeEnding(exited);
  SymbolizeAll(exit_dir);
  ProfileSet exit_profiles = ReadProfiles(exit_dir);
  ASSERT_EQ(exit_profiles.exit_profiles.size(), 1u);
  const Profile& final = exit_profiles.files[exit_profiles.exit_profiles.begin()->second].profile;
  const int64_t final_site = SiteValues(final, "site_peak").inuse_space;
  const int64_t final_total = e2e::TotalValues(final).inuse_space;
  EXPECT_LE(std::abs(final_site - kPeakBytes), k * sigma + rounding)
      << "estimate " << final_site << ", truth " << kPeakBytes << ", sigma " << sigma;

  std::string dir = RunDirectory("preload");
  pid_t pid = -1;
  RunResult run =
      KillAtThePeak({REL_ENDINGS, "peak"}, dir, PreloadEnv(dir, false, seed), kPeakWait, &pid);
  ASSERT_TRUE(WIFSIGNALED(run.wait_status) && WTERMSIG(run.wait_status) == SIGKILL)
      << DescribeEnding(run);
  SymbolizeAll(dir);
  EXPECT_TRUE(ReadProfiles(dir).files.empty()) << "SIGKILL leaves no final profile";
  std::vector<ProfileFile> peaks = ReadPeakProfiles(dir);
  ASSERT_EQ(peaks.size(), 1u) << Listing(dir) << DescribeEnding(run);
  const Profile& peak = peaks[0].profile;
  EXPECT_EQ(peaks[0].pid, pid);
  const int64_t peak_site = SiteValues(peak, "site_peak").inuse_space;
  const int64_t peak_total = e2e::TotalValues(peak).inuse_space;
  // Statistical: against the truth.
  EXPECT_GE(peak_total, (kPeakBytes - k * sigma) / 1.1 - rounding) << "sigma " << sigma;
  EXPECT_LE(peak_site, kPeakBytes + k * sigma + rounding) << "sigma " << sigma;
  // Exact: against the same run's estimate at its peak.
  EXPECT_GE(static_cast<double>(peak_total), final_total / 1.1 - rounding)
      << "peak copy " << peak_total << " of " << final_total;
  EXPECT_LE(peak_site, final_site + rounding);
}

// ---------------------------------------------------------------------------------------------
// The peak profile under a slow disk: capturing the peak never waits for a peak write. The world
// where a write is slow is made deterministically: programs/rel_slow_rename.so holds the first
// peak write in its rename until the program has burst to its true peak
// (programs/rel_peak_burst.c). Before the capture and the write had their own locks, every capture
// during a write was skipped, and this peak profile held the 8 MiB from before the burst instead of
// the 64 MiB peak.

constexpr int64_t kTruePeak = (128 + 896) * 64 * 1024;  // rel_peak_burst's base and burst

class PeakTest : public ReliabilityTest {};

TEST_F(PeakTest, APeakWriteInProgressDoesNotHideTheNextPeak) {
  // Under heaprec run, which keeps the slow disk in LD_PRELOAD after its own library and
  // symbolizes the profiles.
  RunResult run =
      HeaprecRunGuarded(dir(), {"--sample-interval", "1", "--top", "0"}, {REL_PEAK_BURST, dir()},
                        {{"LD_PRELOAD", REL_SLOW_RENAME}, {"REL_SLOW_RENAME_DIR", dir()}});
  ASSERT_EQ(run.status, 0) << Describe(run);
  EXPECT_EQ(run.out, "peak=" + std::to_string(kTruePeak) + "\n");
  std::vector<ProfileFile> peaks = ReadPeakProfiles(dir());
  ASSERT_EQ(peaks.size(), 1u) << Describe(run);
  const Profile& peak = peaks[0].profile;
  // Exact mode: a copy is taken each time the live bytes pass 1.1x the last one, so the last copy
  // of the burst holds at least 1/1.1 of the true peak, and no more than the peak itself.
  int64_t held =
      SiteValues(peak, "site_base").inuse_space + SiteValues(peak, "site_burst").inuse_space;
  EXPECT_GE(held, static_cast<int64_t>(kTruePeak / 1.1)) << "the burst was not captured\n"
                                                         << Describe(run);
  EXPECT_LE(held, kTruePeak);
  EXPECT_GT(SiteValues(peak, "site_burst").inuse_space, 0);
}

// ---------------------------------------------------------------------------------------------
// While the heap record keeps the peak copies, the dump thread's first write of the peak profile
// waits a second after the first copy, as every later one does: a process killed meanwhile leaves
// its peak in the record, one that ends meanwhile writes it with its final profile. So a process
// that grows and ends within a second (rel_endings peak exit: 62.5 MiB in some milliseconds)
// writes its peak profile once, at its end, where it used to write it a first time as soon as it
// passed 64 KiB: its final profile says peak_writes=0 (the writes before it).
TEST_F(EndingsTest, AShortProcessWritesItsPeakProfileOnceAtItsEnd) {
  std::string dir = RunDirectory("preload");
  RunResult run =
      BackgroundProcess(Options({REL_ENDINGS, "peak", "exit"}, dir, PreloadEnv(dir))).Wait();
  ASSERT_EQ(run.status, 0) << DescribeEnding(run);
  SymbolizeAll(dir);
  ProfileSet profiles = ReadProfiles(dir);
  ASSERT_EQ(profiles.exit_profiles.size(), 1u) << Listing(dir);
  const Profile& final = profiles.files[profiles.exit_profiles.begin()->second].profile;
  EXPECT_EQ(CommentValue(final, "peak_writes"), 0) << "the dump thread wrote the peak profile";
  std::vector<ProfileFile> peaks = ReadPeakProfiles(dir);
  ASSERT_EQ(peaks.size(), 1u) << Listing(dir);
  Values site = SiteValues(peaks[0].profile, "site_peak");
  EXPECT_GE(site.inuse_space * 11, kPeakBytes * 10) << site << ": less than 1/1.1 of the peak";
  EXPECT_LE(site.inuse_space, kPeakBytes) << site;
}

// exec replaces the image, and removes the heap record that kept its peak copies: the peak the
// dump thread has not written yet is written before the exec. rel_endings exec-after-peak grows
// 2 MiB and execs at once, long before the dump thread's first write would come.
TEST_F(EndingsTest, ExecWritesThePeakTheRecordKept) {
  std::string dir = RunDirectory("preload");
  RunResult run =
      BackgroundProcess(Options({REL_ENDINGS, "exec-after-peak"}, dir, PreloadEnv(dir))).Wait();
  ASSERT_EQ(run.status, 0) << DescribeEnding(run);
  EXPECT_EQ(run.out.rfind("done ", 0), 0u) << run.out;
  SymbolizeAll(dir);
  std::vector<ProfileFile> peaks = ReadPeakProfiles(dir);
  ASSERT_EQ(peaks.size(), 1u) << Listing(dir);
  constexpr int64_t kGrown = 64 * 32 * 1024;
  Values site = SiteValues(peaks[0].profile, "site_peak");
  EXPECT_GE(site.inuse_space * 11, kGrown * 10) << site << ": less than 1/1.1 of the peak";
  EXPECT_LE(site.inuse_space, kGrown) << site;
  EXPECT_FALSE(std::filesystem::exists(dir + "/p." + std::to_string(peaks[0].pid) + ".record"))
      << Listing(dir);
}

// ---------------------------------------------------------------------------------------------
// HEAPREC_DUMP_ABOVE=N: a profile (reason=above) each time the estimated live heap crosses the
// next multiple of N. The program grows to just past N, 2N and 3N (site_above holds exactly
// k N + N/16 when the heap crosses k N: the crossing is one N/8 block at the site), waits after
// each step until the test saw the profile, then grows to 3.5 N: exactly three, each holding its
// step's bytes.
TEST_F(EndingsTest, DumpAboveEachMultipleExact) {
  constexpr int64_t kStep = 4 << 20;
  const std::vector<std::string> program = {REL_ENDINGS, "above", std::to_string(kStep)};
  auto run = [&](const std::string& dir, const EnvChanges& env, bool profiled) {
    BackgroundProcess process(Options(program, dir, env));
    bool dumps_seen = true;
    for (int k = 1; k <= 3; ++k) {
      EXPECT_FALSE(process.WaitForLine("grown " + std::to_string(k)).empty()) << "step " << k;
      if (profiled && dumps_seen) {
        dumps_seen = WaitUntil([&] { return RunningDumps(dir, process.pid()) >= k; });
        EXPECT_TRUE(dumps_seen) << "no profile " << k << " within " << kDumpWaitSeconds
                                << " s of crossing " << k << " x " << kStep << " bytes";
      }
      process.Send("go");
    }
    return process.Wait();
  };
  RunResult plain = run(RunDirectory("plain"), {}, false);
  ASSERT_EQ(plain.status, 0) << DescribeEnding(plain);
  EXPECT_EQ(plain.out, "grown 1\ngrown 2\ngrown 3\ndone\n");
  std::string dir = RunDirectory("preload");
  RunResult profiled =
      run(dir, PreloadEnv(dir, true, {{"HEAPREC_DUMP_ABOVE", std::to_string(kStep)}}), true);
  ExpectTheSameEnding(profiled, plain);

  SymbolizeAll(dir);
  ProfileSet profiles = ReadProfiles(dir);
  EXPECT_EQ(profiles.Count("above"), 3);
  EXPECT_EQ(profiles.files.size(), 4u) << "three above profiles and the exit profile";
  std::vector<const ProfileFile*> above;  // in file-name (sequence) order
  for (const ProfileFile& file : profiles.files) {
    if (file.reason == "above") above.push_back(&file);
  }
  for (size_t i = 0; i < above.size(); ++i) {
    const int64_t k = static_cast<int64_t>(i) + 1;
    SCOPED_TRACE(above[i]->path);
    Values site = SiteValues(above[i]->profile, "site_above");
    EXPECT_EQ(site.inuse_space, k * kStep + kStep / 16);  // past k N, and no further
    EXPECT_GE(e2e::TotalValues(above[i]->profile).inuse_space, k * kStep);
  }
  ASSERT_EQ(profiles.exit_profiles.size(), 1u);
  const Profile& final = profiles.files[profiles.exit_profiles.begin()->second].profile;
  EXPECT_EQ(SiteValues(final, "site_above").inuse_space, 3 * kStep + kStep / 2);
}

}  // namespace
}  // namespace heaprec::reliability
