// Every way a process ends leaves its final profile, and the process ends exactly as it would have
// without heaprec: exit, _exit, _Exit, abort, an uncaught C++ exception, a failed assert, SIGSEGV,
// SIGBUS, SIGFPE, SIGILL, SIGTERM and SIGHUP from outside, raise(SIGINT), the program's own
// SIGTERM handler (sigaction or signal, before or after heaprec started), a forked child's _exit, a
// vfork child's _exit; SIGKILL at the peak (the peak profile already on disk); HEAPREC_DUMP_ABOVE;
// the dump signal taken over or ignored by the program; an exec chain with interval dumps that
// must not overwrite each other. The program is programs/rel_endings.cc.
//
// The programs run as e2e::BackgroundProcess rather than through RunGuarded: the test reads their
// stdout while they run and writes to their stdin. Every handshake is a line: the program says
// "ready PID" (or "grown K", "handled K") and the test answers on the program's stdin, or waits for
// a profile file to appear. The only timed wait is the one the behaviour is about: the peak profile
// is rewritten at most once per second, so the SIGKILL tests wait 2 s after the program is ready.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "reliability_util.h"

namespace heaprec::reliability {
namespace {

constexpr double kDumpWaitSeconds = 10;  // for a profile the library writes in milliseconds

void SleepSeconds(double seconds) { usleep(static_cast<useconds_t>(seconds * 1e6)); }

using e2e::BackgroundOptions;
using e2e::BackgroundProcess;
using e2e::MonotonicSeconds;

// How the endings start a program: stdin a pipe from the test (the handshakes), RLIMIT_CORE 0
// unless `cores` (then its hard limit).
BackgroundOptions Options(const std::vector<std::string>& argv, const std::string& cwd,
                          const EnvChanges& env, bool cores = false) {
  BackgroundOptions options;
  options.argv = argv;
  options.cwd = cwd;
  options.env = env;
  options.stdin_pipe = true;
  options.core_dumps = cores;
  options.guard_seconds = 60;  // far beyond any run here: only a deadlock reaches it
  return options;
}

// "exit 3", "signal 11 (SIGSEGV), core dumped": for messages.
std::string DescribeStatus(int wait_status) {
  if (WIFEXITED(wait_status)) return "exit " + std::to_string(WEXITSTATUS(wait_status));
  if (!WIFSIGNALED(wait_status)) return "wait status " + std::to_string(wait_status);
  return "signal " + std::to_string(WTERMSIG(wait_status)) + " (SIG" +
         sigabbrev_np(WTERMSIG(wait_status)) + ")" +
         (WCOREDUMP(wait_status) ? ", core dumped" : "");
}

std::string DescribeEnding(const RunResult& run) {
  return DescribeStatus(run.wait_status) + (run.status == kHung ? " (HUNG)" : "") +
         "\n--- stdout ---\n" + run.out.substr(0, 2000) + "\n--- stderr ---\n" +
         run.err.substr(0, 4000);
}

// The line heaprec run prints about the program's end, from the unprofiled run's wait status.
std::string HeaprecEndingLine(int wait_status) {
  if (WIFEXITED(wait_status)) {
    return "heaprec: the program exited with status " + std::to_string(WEXITSTATUS(wait_status)) +
           "\n";
  }
  return "heaprec: the program was killed by signal " + std::to_string(WTERMSIG(wait_status)) +
         " (SIG" + sigabbrev_np(WTERMSIG(wait_status)) + ")" +
         (WCOREDUMP(wait_status) ? ", core dumped" : "") + "\n";
}

// stdout with the pids of "... ready PID" lines replaced: the only output that differs per run.
std::string WithoutPids(const std::string& out) {
  static const std::regex kReady("(ready) [0-9]+");
  return std::regex_replace(out, kReady, "$1 PID");
}

// The names in `dir`, one a line: for messages.
std::string Listing(const std::string& dir) {
  std::string names = "files in " + dir + ":\n";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names += "  " + entry.path().filename().string() + "\n";
  }
  return names;
}

bool Contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

// Waits until `done()` holds, for at most `seconds`; returns whether it did.
bool WaitUntil(const std::function<bool()>& done, double seconds = kDumpWaitSeconds) {
  for (const double deadline = MonotonicSeconds() + seconds; MonotonicSeconds() < deadline;
       usleep(2 * 1000)) {
    if (done()) return true;
  }
  return done();
}

// Profiles in `dir` (peak ones included) whose names are p.<pid>.NNNN...pb.gz: the ones a process
// writes while it runs (interval, signal, above), never the final or the peak one.
int RunningDumps(const std::string& dir, pid_t pid) {
  int n = 0;
  std::string prefix = "p." + std::to_string(pid) + ".";
  for (const std::string& path : e2e::ListProfiles(dir)) {
    std::string name = path.substr(path.rfind('/') + 1);
    n += name.rfind(prefix, 0) == 0 && name.size() > prefix.size() &&
         std::isdigit(static_cast<unsigned char>(name[prefix.size()]));
  }
  return n;
}

const std::string kLib = HEAPREC_LIB;

// The library's environment for a run in `dir`: exact mode unless `exact` is false.
EnvChanges PreloadEnv(const std::string& dir, bool exact = true, const EnvChanges& more = {}) {
  EnvChanges env = {{"LD_PRELOAD", kLib}, {"HEAPREC_OUTPUT", dir + "/p.%p.pb.gz"}};
  if (exact) env["HEAPREC_SAMPLE_INTERVAL"] = "1";
  for (const auto& [name, value] : more) env[name] = value;
  return env;
}

std::vector<std::string> UnderHeaprec(const std::string& dir,
                                      const std::vector<std::string>& program,
                                      const std::vector<std::string>& flags) {
  std::vector<std::string> all = {"--top", "0"};
  all.insert(all.end(), flags.begin(), flags.end());
  return e2e::HeaprecArgv(dir, all, program);
}

// The library writes unsymbolized profiles (heaprec run symbolizes them afterwards): names for the
// site checks.
void SymbolizeAll(const std::string& dir) {
  for (bool peak : {false, true}) {
    for (const std::string& path : e2e::ListProfiles(dir, peak)) {
      RunResult run = RunGuarded({HEAPREC_BIN, "symbolize", path}, dir);
      EXPECT_EQ(run.status, 0) << "heaprec symbolize " << path << "\n" << run.err;
    }
  }
}

const Values kEndingSite = {40, 40 * 1000, 40, 40 * 1000};  // site_ending, exact
const Values kChildSite = {30, 30 * 700, 30, 30 * 700};     // site_child, exact

class EndingsTest : public ReliabilityTest {
 protected:
  // A fresh directory for one run: <dir>/NAME-N.
  std::string RunDirectory(const std::string& name) {
    std::string path = dir_ / (name + "-" + std::to_string(++runs_));
    std::filesystem::create_directories(path);
    return path;
  }

  // `program`, which needs no handshake, run to its end plainly (in plain-N) and with the library
  // preloaded in exact mode (in preload-N).
  struct PlainAndPreloaded {
    RunResult plain, preload;
    std::string preload_dir;
    pid_t preload_pid = -1;  // the pid the preloaded process's profiles must carry
  };
  PlainAndPreloaded RunPlainAndPreloaded(const std::vector<std::string>& program) {
    PlainAndPreloaded r;
    r.plain = BackgroundProcess(Options(program, RunDirectory("plain"), {})).Wait();
    r.preload_dir = RunDirectory("preload");
    BackgroundProcess preload(Options(program, r.preload_dir, PreloadEnv(r.preload_dir)));
    r.preload_pid = preload.pid();
    r.preload = preload.Wait();
    return r;
  }

  int runs_ = 0;
};

// Expects `run` (with the library preloaded) to end exactly as `plain` did: the same wait status,
// stdout and stderr, the library printing nothing.
void ExpectTheSameEnding(const RunResult& run, const RunResult& plain) {
  EXPECT_EQ(run.wait_status, plain.wait_status) << DescribeEnding(run);
  EXPECT_EQ(run.out, plain.out);
  EXPECT_EQ(run.err, plain.err);
}

// ---------------------------------------------------------------------------------------------
// The endings, each run three ways: plainly, with the library preloaded (exact mode) and under
// `heaprec run --sample-interval 1`. Same wait status (exit status, or terminating signal and
// core-dump flag), same stdout and stderr; one final profile with the right reason (and signal
// comment), named after its own pid, holding site_ending's 40 x 1000 bytes exactly.

struct EndingCase {
  std::string name;    // test name
  std::string mode;    // rel_endings MODE
  int exit_status;     // how it ends: an exit status, or -1 and...
  int signal_number;   // ...the terminating signal
  std::string reason;  // the final profile's reason
  std::string out;     // expected stdout, pids replaced (WithoutPids)
  int send = 0;        // a signal the test sends once the program says "ready PID"
  // A substring of the program's own stderr (abort, assert, terminate messages), "" for none.
  std::string err_has = "";
};

void PrintTo(const EndingCase& c, std::ostream* out) { *out << c.name << " (" << c.mode << ")"; }

class EndingTest : public EndingsTest, public ::testing::WithParamInterface<EndingCase> {};

struct ThreeRuns {
  RunResult plain, preload, heaprec;
  std::string preload_dir, heaprec_dir;
  pid_t preload_pid = -1;
};

TEST_P(EndingTest, FinalProfileAndTheSameEnding) {
  const EndingCase& c = GetParam();
  const std::vector<std::string> program = {REL_ENDINGS, c.mode};
  ThreeRuns r;
  // One run of `argv` in `cwd`: sends c.send once the program is ready.
  auto run = [&](const std::vector<std::string>& argv, const std::string& cwd,
                 const EnvChanges& env, pid_t* pid) {
    BackgroundProcess process(Options(argv, cwd, env));
    if (pid != nullptr) *pid = process.pid();
    if (c.send != 0) {
      pid_t ready = process.WaitUntilReady();
      EXPECT_GT(ready, 0) << "never said ready";
      if (ready > 0) {
        EXPECT_EQ(kill(ready, c.send), 0);
      }
    }
    return process.Wait();
  };
  std::string plain_dir = RunDirectory("plain");
  r.plain = run(program, plain_dir, {}, nullptr);
  r.preload_dir = RunDirectory("preload");
  r.preload = run(program, r.preload_dir, PreloadEnv(r.preload_dir), &r.preload_pid);
  r.heaprec_dir = RunDirectory("heaprec");
  r.heaprec = run(UnderHeaprec(r.heaprec_dir, program, {"--sample-interval", "1"}), r.heaprec_dir,
                  {}, nullptr);

  // The case itself: how the program ends without heaprec.
  if (c.exit_status >= 0) {
    ASSERT_TRUE(WIFEXITED(r.plain.wait_status) && WEXITSTATUS(r.plain.wait_status) == c.exit_status)
        << "unprofiled run\n"
        << DescribeEnding(r.plain);
  } else {
    ASSERT_TRUE(WIFSIGNALED(r.plain.wait_status) &&
                WTERMSIG(r.plain.wait_status) == c.signal_number)
        << "unprofiled run\n"
        << DescribeEnding(r.plain);
  }
  EXPECT_EQ(WithoutPids(r.plain.out), c.out);
  EXPECT_TRUE(Contains(r.plain.err, c.err_has)) << r.plain.err;

  // With the library alone: the very same wait status, output and messages.
  EXPECT_EQ(DescribeStatus(r.preload.wait_status), DescribeStatus(r.plain.wait_status))
      << "preloaded run\n"
      << DescribeEnding(r.preload);
  EXPECT_EQ(r.preload.wait_status, r.plain.wait_status);
  EXPECT_EQ(WithoutPids(r.preload.out), WithoutPids(r.plain.out));
  EXPECT_EQ(r.preload.err, r.plain.err);

  // Under heaprec run: its status is the program's (128+N for signal N), it says how the program
  // ended (core dump included), and the program's own stderr is unchanged.
  int expected_status = WIFEXITED(r.plain.wait_status) ? WEXITSTATUS(r.plain.wait_status)
                                                       : 128 + WTERMSIG(r.plain.wait_status);
  EXPECT_TRUE(WIFEXITED(r.heaprec.wait_status)) << DescribeEnding(r.heaprec);
  EXPECT_EQ(r.heaprec.status, expected_status) << DescribeEnding(r.heaprec);
  EXPECT_TRUE(Contains(r.heaprec.err, HeaprecEndingLine(r.plain.wait_status)))
      << DescribeEnding(r.heaprec);
  EXPECT_EQ(WithoutPids(r.heaprec.out), WithoutPids(r.plain.out));
  EXPECT_EQ(WithoutHeaprecLines(r.heaprec.err), r.plain.err) << DescribeEnding(r.heaprec);

  SymbolizeAll(r.preload_dir);
  for (const std::string& dir : {r.preload_dir, r.heaprec_dir}) {
    SCOPED_TRACE(dir == r.preload_dir ? "preloaded" : "heaprec run");
    ProfileSet profiles = ReadProfiles(dir);
    ASSERT_EQ(profiles.files.size(), 1u) << "one final profile and nothing else";
    const ProfileFile& final = profiles.files[0];
    EXPECT_EQ(final.reason, c.reason);
    EXPECT_EQ(profiles.final_profiles.size(), 1u);
    if (dir == r.preload_dir) {
      EXPECT_EQ(final.pid, r.preload_pid);
      EXPECT_EQ(final.path, dir + "/p." + std::to_string(r.preload_pid) + ".pb.gz");
    }
    std::string signal_comment =
        c.exit_status >= 0 ? "" : std::string("SIG") + sigabbrev_np(c.signal_number);
    EXPECT_EQ(CommentText(final.profile, "signal"), signal_comment);
    EXPECT_EQ(SiteValues(final.profile, "site_ending"), kEndingSite);
  }
}

const char* const kReadyOut = "ready PID\n";

INSTANTIATE_TEST_SUITE_P(
    Endings, EndingTest,
    ::testing::Values(
        EndingCase{"Exit", "exit", 3, 0, "exit", "before exit\n"},
        EndingCase{"UnderscoreExit", "_exit", 7, 0, "_exit", "before _exit\n"},
        EndingCase{"UnderscoreCapitalExit", "_Exit", 8, 0, "_exit", "before _Exit\n"},
        EndingCase{"Abort", "abort", -1, SIGABRT, "crash", "before abort\n"},
        EndingCase{"UncaughtException", "throw", -1, SIGABRT, "crash", "before throw\n", 0,
                   "terminate called after throwing an instance of 'std::runtime_error'"},
        EndingCase{"FailedAssert", "assert", -1, SIGABRT, "crash", "before assert\n", 0,
                   "Assertion `argc == 1000 && \"the failing assertion\"' failed."},
        EndingCase{"NullWrite", "segv", -1, SIGSEGV, "crash", "before segv\n"},
        EndingCase{"BusError", "bus", -1, SIGBUS, "crash", "before bus\n"},
        EndingCase{"DivideByZero", "fpe", -1, SIGFPE, "crash", "before fpe\n"},
        EndingCase{"IllegalInstruction", "ill", -1, SIGILL, "crash", "before ill\n"},
        EndingCase{"RaiseSigint", "raise-int", -1, SIGINT, "terminated", "before raise-int\n"},
        EndingCase{"SigtermFromOutside", "sleep", -1, SIGTERM, "terminated", kReadyOut, SIGTERM},
        EndingCase{"SighupFromOutside", "sleep", -1, SIGHUP, "terminated", kReadyOut, SIGHUP},
        // The program's own handler keeps full control: it prints and calls exit(7).
        EndingCase{"OwnSigtermHandlerSigaction", "term-sigaction", 7, 0, "exit",
                   "ready PID\nhandled SIGTERM\n", SIGTERM},
        EndingCase{"OwnSigtermHandlerSignal", "term-signal", 7, 0, "exit",
                   "ready PID\nhandled SIGTERM\n", SIGTERM},
        EndingCase{"OwnSigtermHandlerSigactionBeforeHeaprec", "term-sigaction-early", 7, 0, "exit",
                   "ready PID\nhandled SIGTERM\n", SIGTERM},
        EndingCase{"OwnSigtermHandlerSignalBeforeHeaprec", "term-signal-early", 7, 0, "exit",
                   "ready PID\nhandled SIGTERM\n", SIGTERM}),
    [](const ::testing::TestParamInfo<EndingCase>& info) { return info.param.name; });

// Core dumps: with RLIMIT_CORE raised, a crash dumps core with heaprec exactly as without (the
// kernel's core-dump flag in the wait status, and heaprec run's line saying so).
TEST_F(EndingsTest, CoreDumpFlagIsTheSame) {
  for (const char* mode : {"segv", "abort"}) {
    SCOPED_TRACE(mode);
    std::string plain_dir = RunDirectory("plain");
    RunResult plain = BackgroundProcess(Options({REL_ENDINGS, mode}, plain_dir, {}, true)).Wait();
    std::string preload_dir = RunDirectory("preload");
    RunResult preload =
        BackgroundProcess(Options({REL_ENDINGS, mode}, preload_dir, PreloadEnv(preload_dir), true))
            .Wait();
    std::string heaprec_dir = RunDirectory("heaprec");
    RunResult heaprec =
        BackgroundProcess(
            Options(UnderHeaprec(heaprec_dir, {REL_ENDINGS, mode}, {}), heaprec_dir, {}, true))
            .Wait();
    ASSERT_TRUE(WIFSIGNALED(plain.wait_status)) << DescribeEnding(plain);
    EXPECT_EQ(DescribeStatus(preload.wait_status), DescribeStatus(plain.wait_status));
    EXPECT_TRUE(Contains(heaprec.err, HeaprecEndingLine(plain.wait_status))) << heaprec.err;
    // Whether a core is written is the system's choice (core_pattern); as plainly, either way.
    EXPECT_EQ(std::filesystem::exists(preload_dir + "/core"),
              std::filesystem::exists(plain_dir + "/core"));
    for (const std::string& dir : {preload_dir, heaprec_dir}) {
      ProfileSet profiles = ReadProfiles(dir);
      ASSERT_EQ(profiles.final_profiles.size(), 1u) << dir;
      EXPECT_EQ(profiles.files[profiles.final_profiles.begin()->second].reason, "crash");
    }
    for (const std::string& dir : {plain_dir, preload_dir, heaprec_dir}) {
      std::filesystem::remove_all(dir);  // the cores
    }
  }
}

// A forked child (Python multiprocessing style) that leaves with _exit writes its own final
// profile (reason=_exit, its own pid), holding what it allocated and what it inherited; the
// parent's exit profile holds nothing of the child's.
TEST_F(EndingsTest, ForkedChildEndingWithUnderscoreExit) {
  const std::vector<std::string> program = {REL_ENDINGS, "fork-_exit"};
  auto [plain, preload, preload_dir, parent] = RunPlainAndPreloaded(program);
  ASSERT_EQ(plain.status, 0) << DescribeEnding(plain);
  EXPECT_EQ(plain.out, "child exited 5\n");
  ExpectTheSameEnding(preload, plain);
  std::string heaprec_dir = RunDirectory("heaprec");
  RunResult heaprec =
      BackgroundProcess(
          Options(UnderHeaprec(heaprec_dir, program, {"--sample-interval", "1"}), heaprec_dir, {}))
          .Wait();
  EXPECT_EQ(heaprec.status, 0) << DescribeEnding(heaprec);
  EXPECT_EQ(heaprec.out, plain.out);
  EXPECT_EQ(WithoutHeaprecLines(heaprec.err), plain.err);

  SymbolizeAll(preload_dir);
  for (const std::string& dir : {preload_dir, heaprec_dir}) {
    SCOPED_TRACE(dir == preload_dir ? "preloaded" : "heaprec run");
    ProfileSet profiles = ReadProfiles(dir);
    ASSERT_EQ(profiles.files.size(), 2u);
    ASSERT_EQ(profiles.final_profiles.size(), 2u);
    ASSERT_EQ(profiles.exit_profiles.size(), 1u);
    int64_t parent_pid = profiles.exit_profiles.begin()->first;
    if (dir == preload_dir) {
      EXPECT_EQ(parent_pid, parent);
    }
    const ProfileFile* child = nullptr;
    for (const ProfileFile& file : profiles.files) {
      if (file.pid != parent_pid) child = &file;
    }
    ASSERT_NE(child, nullptr);
    EXPECT_EQ(child->reason, "_exit");
    EXPECT_EQ(child->path, dir + "/p." + std::to_string(child->pid) + ".pb.gz");
    EXPECT_EQ(SiteValues(child->profile, "site_child"), kChildSite);
    EXPECT_EQ(SiteValues(child->profile, "site_ending"), kEndingSite);  // inherited, still live
    const Profile& parent_profile = profiles.ExitProfile(parent_pid);
    EXPECT_EQ(SiteValues(parent_profile, "site_ending"), kEndingSite);
    EXPECT_EQ(SiteValues(parent_profile, "site_child"), Values{});
  }
}

// A vfork child shares its parent's memory: its _exit writes no profile (that would be the
// parent's heap under the child's pid); the parent's exit profile is the only one.
TEST_F(EndingsTest, VforkChildEndingWithUnderscoreExitWritesNothing) {
  const std::vector<std::string> program = {REL_ENDINGS, "vfork"};
  auto [plain, preload, preload_dir, parent] = RunPlainAndPreloaded(program);
  ASSERT_EQ(plain.status, 0) << DescribeEnding(plain);
  EXPECT_EQ(plain.out, "child exited 6\n");
  ExpectTheSameEnding(preload, plain);
  SymbolizeAll(preload_dir);
  ProfileSet profiles = ReadProfiles(preload_dir);
  ASSERT_EQ(profiles.files.size(), 1u);
  EXPECT_EQ(profiles.files[0].reason, "exit");
  EXPECT_EQ(profiles.files[0].pid, parent);
  EXPECT_EQ(SiteValues(profiles.files[0].profile, "site_ending"), kEndingSite);
}

// ---------------------------------------------------------------------------------------------
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
    EXPECT_TRUE(ReadProfiles(dir).files.empty()) << "SIGKILL leaves no final profile";
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

// ---------------------------------------------------------------------------------------------
// The dump signal taken over by the program (puma, nginx: their own SIGUSR2 handler, installed
// after start-up). Each SIGUSR2 reaches the program's handler exactly as without heaprec, and still
// asks for a dump; each dump is reported on stderr (one "heaprec: wrote PATH (on signal)" line)
// unless HEAPREC_QUIET=1. The test sends the next signal only once the program said it handled
// the last one and (profiled) its profile is on disk, so no two requests merge into one dump.

// Sends three SIGUSR2 to `process`, each acknowledged with "handled K" when `handled` (else, for an
// ignoring program, unobservable), and with `dumps` each waited for as a profile in `dir`; then
// tells the program to go on.
void SendThreeDumpSignals(BackgroundProcess& process, const std::string& dir, bool handled,
                          bool dumps) {
  pid_t pid = process.WaitUntilReady();
  ASSERT_GT(pid, 0) << "never said ready";
  for (int k = 1; k <= 3; ++k) {
    ASSERT_EQ(kill(pid, SIGUSR2), 0);
    if (handled) {
      EXPECT_FALSE(process.WaitForLine("handled " + std::to_string(k)).empty()) << "signal " << k;
    }
    if (dumps) {
      EXPECT_TRUE(WaitUntil([&] { return RunningDumps(dir, pid) >= k; }))
          << "no signal profile " << k << " within " << kDumpWaitSeconds << " s";
    }
  }
  process.Send("go");
}

// `options` run to its end, sent the three dump signals as above.
RunResult RunWithThreeDumpSignals(const BackgroundOptions& options, bool handled, bool dumps) {
  BackgroundProcess process(options);
  SendThreeDumpSignals(process, options.cwd, handled, dumps);
  return process.Wait();
}

// Checks the three signal profiles and the lines reporting them.
void ExpectThreeSignalDumps(const std::string& dir, const std::string& err, bool quiet,
                            bool symbolize) {
  if (symbolize) SymbolizeAll(dir);
  ProfileSet profiles = ReadProfiles(dir);
  EXPECT_EQ(profiles.Count("signal"), 3);
  EXPECT_EQ(profiles.exit_profiles.size(), 1u);
  EXPECT_EQ(profiles.files.size(), 4u);
  size_t reported = 0;
  for (const std::string& line : Lines(err)) {
    reported += line.rfind("heaprec: wrote ", 0) == 0 && Contains(line, "(on signal)");
  }
  EXPECT_EQ(reported, quiet ? 0u : 3u) << err;
  for (const ProfileFile& file : profiles.files) {
    if (file.reason != "signal") continue;
    EXPECT_EQ(Contains(err, "heaprec: wrote " + file.path + " (on signal)\n"), !quiet)
        << file.path << "\n"
        << err;
  }
}

TEST_F(EndingsTest, DumpSignalTakenOverByTheProgram) {
  const std::vector<std::string> program = {REL_ENDINGS, "usr2-handler"};
  std::string plain_dir = RunDirectory("plain");
  RunResult plain = RunWithThreeDumpSignals(Options(program, plain_dir, {}), true, false);
  ASSERT_EQ(plain.status, 0) << DescribeEnding(plain);
  EXPECT_EQ(WithoutPids(plain.out), "ready PID\nhandled 1\nhandled 2\nhandled 3\ncount=3\n");

  for (bool quiet : {false, true}) {
    SCOPED_TRACE(quiet ? "preloaded, HEAPREC_QUIET=1" : "preloaded");
    std::string dir = RunDirectory("preload");
    EnvChanges env = PreloadEnv(dir, false, {{"HEAPREC_DUMP_SIGNAL", "USR2"}});
    if (quiet) env["HEAPREC_QUIET"] = "1";
    RunResult run = RunWithThreeDumpSignals(Options(program, dir, env), true, true);
    EXPECT_EQ(run.wait_status, plain.wait_status) << DescribeEnding(run);
    EXPECT_EQ(WithoutPids(run.out), WithoutPids(plain.out));
    if (quiet) {
      EXPECT_EQ(run.err, plain.err);
    }
    ExpectThreeSignalDumps(dir, run.err, quiet, true);
  }

  SCOPED_TRACE("heaprec run --dump-signal SIGUSR2");
  std::string dir = RunDirectory("heaprec");
  RunResult run = RunWithThreeDumpSignals(
      Options(UnderHeaprec(dir, program, {"--dump-signal", "SIGUSR2"}), dir, {}), true, true);
  EXPECT_EQ(run.status, 0) << DescribeEnding(run);
  EXPECT_EQ(WithoutPids(run.out), WithoutPids(plain.out));
  ExpectThreeSignalDumps(dir, run.err, false, false);
}

// The program ignores the dump signal (SIG_IGN): ignored it stays (a handler, even heaprec's, would
// cut its sleeps short with EINTR), and heaprec says so in one line at that moment, so that dumps
// never stop silently. The program goes on as without heaprec; no signal profile is written.
TEST_F(EndingsTest, DumpSignalIgnoredByTheProgram) {
  const std::vector<std::string> program = {REL_ENDINGS, "usr2-ignore"};
  std::string plain_dir = RunDirectory("plain");
  RunResult plain = RunWithThreeDumpSignals(Options(program, plain_dir, {}), false, false);
  ASSERT_EQ(plain.status, 0) << DescribeEnding(plain);
  EXPECT_EQ(WithoutPids(plain.out), "ready PID\nalive\n");

  auto expect_one_line = [](const std::string& err) {
    size_t said = 0;
    for (const std::string& line : Lines(err)) {
      said += line ==
              "heaprec: the program ignores SIGUSR2, the dump signal: no profiles on it "
              "while it does";
    }
    EXPECT_EQ(said, 1u) << err;
  };
  std::string dir = RunDirectory("preload");
  RunResult run = RunWithThreeDumpSignals(
      Options(program, dir, PreloadEnv(dir, false, {{"HEAPREC_DUMP_SIGNAL", "USR2"}})), false,
      false);
  EXPECT_EQ(run.wait_status, plain.wait_status) << DescribeEnding(run);
  EXPECT_EQ(WithoutPids(run.out), WithoutPids(plain.out));
  expect_one_line(run.err);
  ProfileSet profiles = ReadProfiles(dir);
  EXPECT_EQ(profiles.Count("signal"), 0);
  EXPECT_EQ(profiles.exit_profiles.size(), 1u);

  std::string heaprec_dir = RunDirectory("heaprec");
  RunResult heaprec = RunWithThreeDumpSignals(
      Options(UnderHeaprec(heaprec_dir, program, {"--dump-signal", "SIGUSR2"}), heaprec_dir, {}),
      false, false);
  EXPECT_EQ(heaprec.status, 0) << DescribeEnding(heaprec);
  EXPECT_EQ(WithoutPids(heaprec.out), WithoutPids(plain.out));
  expect_one_line(heaprec.err);
  EXPECT_EQ(ReadProfiles(heaprec_dir).Count("signal"), 0);
}

// ---------------------------------------------------------------------------------------------
// An exec chain with interval dumps and a template with only %p (HEAPREC_OUTPUT=dir/heap.%p.pb.gz,
// HEAPREC_DUMP_INTERVAL=0.2): both programs of the process (same pid) number their dumps from
// 0001. No profile may be overwritten: the second program's dumps take the names with "-2"
// (heap.PID.0001-2.pb.gz, ...) where the first program's files are, and its exit profile is the
// only final one. The test lets the first program exec right after one of its dumps appeared, so
// the exec does not cut a dump in half (that would leave a temporary file: ReadProfiles fails).
TEST_F(EndingsTest, ExecChainWithIntervalDumpsOverwritesNothing) {
  const std::vector<std::string> program = {REL_ENDINGS, "exec-first"};
  auto drive = [&](BackgroundProcess& process, const std::string& dir, bool profiled,
                   std::set<std::string>* first_files) {
    pid_t pid = process.WaitUntilReady("first ready");
    ASSERT_GT(pid, 0) << "first program never said ready";
    std::string prefix = dir + "/heap." + std::to_string(pid) + ".";
    if (profiled) {
      EXPECT_TRUE(WaitUntil([&] { return std::filesystem::exists(prefix + "0002.pb.gz"); }))
          << "first program: no second interval dump";
      for (const std::string& path : e2e::ListProfiles(dir)) first_files->insert(path);
    }
    process.Send("go");
    EXPECT_EQ(process.WaitUntilReady("second ready"), pid) << "exec keeps the pid";
    if (profiled) {
      EXPECT_TRUE(WaitUntil([&] { return std::filesystem::exists(prefix + "0002-2.pb.gz"); }))
          << "second program: no heap.PID.0002-2.pb.gz";
    }
    process.Send("go");
  };
  std::string plain_dir = RunDirectory("plain");
  BackgroundProcess plain_process(Options(program, plain_dir, {}));
  drive(plain_process, plain_dir, false, nullptr);
  RunResult plain = plain_process.Wait();
  ASSERT_EQ(plain.status, 0) << DescribeEnding(plain);
  EXPECT_EQ(WithoutPids(plain.out), "first ready PID\nsecond ready PID\n");

  std::string dir = RunDirectory("preload");
  EnvChanges env = PreloadEnv(
      dir, true, {{"HEAPREC_OUTPUT", dir + "/heap.%p.pb.gz"}, {"HEAPREC_DUMP_INTERVAL", "0.2"}});
  BackgroundProcess process(Options(program, dir, env));
  const pid_t pid = process.pid();
  std::set<std::string> first_files;  // on disk when the first program was let exec
  drive(process, dir, true, &first_files);
  RunResult run = process.Wait();
  EXPECT_EQ(run.wait_status, plain.wait_status) << DescribeEnding(run);
  EXPECT_EQ(WithoutPids(run.out), WithoutPids(plain.out));
  EXPECT_EQ(run.err, plain.err);

  SymbolizeAll(dir);
  ProfileSet profiles = ReadProfiles(dir);
  const std::string prefix = dir + "/heap." + std::to_string(pid) + ".";
  const Values first_site = {10, 10 * 1000, 10, 10 * 1000},
               second_site = {10, 10 * 2000, 10, 10 * 2000};
  EXPECT_GE(first_files.size(), 2u);
  std::set<std::string> seen;
  for (const ProfileFile& file : profiles.files) {
    SCOPED_TRACE(file.path);
    seen.insert(file.path);
    EXPECT_EQ(file.pid, pid);
    Values first = SiteValues(file.profile, "site_first");
    Values second = SiteValues(file.profile, "site_second");
    if (first_files.count(file.path) != 0) {
      // Written by the first program; still its own.
      EXPECT_EQ(file.reason, "interval");
      EXPECT_EQ(first, first_site);
      EXPECT_EQ(second, Values{});
    } else {
      // Each profile is one program's: the first one's (written after the test looked) or the
      // second one's.
      EXPECT_TRUE((first == first_site && second == Values{}) ||
                  (first == Values{} && second == second_site))
          << "site_first " << first << ", site_second " << second;
    }
    if (file.path == prefix + "0001-2.pb.gz" || file.path == prefix + "0002-2.pb.gz") {
      EXPECT_EQ(file.reason, "interval");
      EXPECT_EQ(second, second_site);
    }
  }
  for (const std::string& path : first_files) EXPECT_EQ(seen.count(path), 1u) << path << " gone";
  EXPECT_EQ(seen.count(prefix + "0001.pb.gz"), 1u);
  EXPECT_EQ(seen.count(prefix + "0002.pb.gz"), 1u);
  EXPECT_EQ(seen.count(prefix + "0001-2.pb.gz"), 1u);
  EXPECT_EQ(seen.count(prefix + "0002-2.pb.gz"), 1u);
  EXPECT_EQ(profiles.final_profiles.size(), 1u);
  ASSERT_EQ(profiles.exit_profiles.size(), 1u);
  const ProfileFile& final = profiles.files[profiles.exit_profiles.begin()->second];
  EXPECT_EQ(final.path, dir + "/heap." + std::to_string(pid) + ".pb.gz");
  EXPECT_EQ(SiteValues(final.profile, "site_second"), second_site);
  EXPECT_EQ(SiteValues(final.profile, "site_first"), Values{});
}

}  // namespace
}  // namespace heaprec::reliability
