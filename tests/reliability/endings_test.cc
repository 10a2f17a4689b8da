// Every way a process ends leaves its final profile, and the process ends exactly as it would have
// without heaprec: exit, _exit, _Exit, abort, an uncaught C++ exception, a failed assert, SIGSEGV,
// SIGBUS, SIGFPE, SIGILL, SIGTERM and SIGHUP from outside, raise(SIGINT), the program's own
// SIGTERM handler (sigaction or signal, before or after heaprec started), a forked child's _exit, a
// vfork child's _exit. The program is programs/rel_endings.cc (endings_util.h: how the tests drive
// it).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <cstring>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "endings_util.h"

namespace heaprec::reliability {
namespace {

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

const Values kEndingSite = {40, 40 * 1000, 40, 40 * 1000};  // site_ending, exact
const Values kChildSite = {30, 30 * 700, 30, 30 * 700};     // site_child, exact

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
    // Inherited, still live; allocated by the parent, so not in the child's alloc_*.
    EXPECT_EQ(SiteValues(child->profile, "site_ending"),
              (Values{0, 0, kEndingSite.inuse_objects, kEndingSite.inuse_space}));
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

}  // namespace
}  // namespace heaprec::reliability
