// `heaprec run` as the program's parent: signals reach the program as they would without heaprec
// (Ctrl-C once, kill through heaprec), the program starts with its own signal state and
// descriptors, and heaprec says how it ended: its status, a static executable it cannot profile,
// a final profile that holds less than the peak one.
//
// Each scenario runs the program (tests/e2e/programs/run_probe.c) both plainly and under heaprec,
// started the same way, and compares. Every wait has a hang guard; the only timing bound is the
// one the behaviour is about (heaprec ends within a second of Ctrl-C).
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "e2e_util.h"

namespace heaprec::e2e {
namespace {

// What a process inherits from whoever starts it, beyond what BackgroundProcess always gives (a
// fresh process group, default dispositions, an empty mask, stdin /dev/null, stdout and stderr
// captured): the fields of BackgroundOptions other than argv, cwd and env. The scenarios start a
// program plainly and under heaprec the same way.
using Start = BackgroundOptions;

// `start` running `argv` in `cwd`.
BackgroundOptions Options(const std::vector<std::string>& argv, const std::string& cwd, Start start,
                          const EnvChanges& env = {}) {
  start.argv = argv;
  start.cwd = cwd;
  start.env = env;
  return start;
}

// `heaprec run -o <cwd>/p.%p.pb.gz FLAGS -- PROGRAM...`.
std::vector<std::string> UnderHeaprec(const std::string& cwd,
                                      const std::vector<std::string>& program,
                                      const std::vector<std::string>& flags = {}) {
  return HeaprecArgv(cwd, flags, program);
}

// Whether this system gives out pseudo-terminals (a container may have no /dev/pts).
bool HavePty() {
  int master = -1, slave = -1;
  if (openpty(&master, &slave, nullptr, nullptr, nullptr) != 0) return false;
  close(master);
  close(slave);
  return true;
}

// Whether no process is left in the group `pgid`.
bool GroupIsGone(pid_t pgid) { return kill(-pgid, 0) != 0 && errno == ESRCH; }

bool IsGone(pid_t pid) { return kill(pid, 0) != 0 && errno == ESRCH; }

// "SIGTERM".
std::string SignalName(int signal_number) {
  return std::string("SIG") + sigabbrev_np(signal_number);
}

// Whether a `run_probe fds` listing holds descriptor `fd`.
bool HasDescriptor(const std::string& listing, int fd) {
  return ("\n" + listing).find("\n" + std::to_string(fd) + " -> ") != std::string::npos;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

bool Contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

class RunSignalsTest : public ::testing::Test {
 protected:
  // A fresh directory for one run: <dir>/NAME.
  std::string RunDirectory(const std::string& name) {
    std::string path = dir_ / name;
    std::filesystem::create_directories(path);
    return path;
  }

  // Runs `program` started as `start`, plainly and under heaprec (FLAGS), each to its end.
  std::pair<RunResult, RunResult> RunBoth(const std::vector<std::string>& program,
                                          const Start& start = {},
                                          const std::vector<std::string>& flags = {}) {
    std::string plain_dir = RunDirectory("plain" + std::to_string(++runs_));
    std::string heaprec_dir = RunDirectory("heaprec" + std::to_string(runs_));
    RunResult plain = BackgroundProcess(Options(program, plain_dir, start)).Wait();
    RunResult profiled =
        BackgroundProcess(Options(UnderHeaprec(heaprec_dir, program, flags), heaprec_dir, start))
            .Wait();
    return {plain, profiled};
  }

  TempDir dir_;
  int runs_ = 0;
};

// Ctrl-C on the terminal: the terminal sends SIGINT to the whole foreground process group, heaprec
// and the program; the program dies of it, heaprec reports and exits 130 within a second.
TEST_F(RunSignalsTest, CtrlCOnTheTerminalEndsTheProgramAndHeaprec) {
  ASSERT_TRUE(HavePty()) << "no pseudo-terminal to type Ctrl-C on (/dev/ptmx)";
  for (bool profiled : {false, true}) {
    SCOPED_TRACE(profiled ? "under heaprec" : "plain");
    std::string cwd = RunDirectory(profiled ? "heaprec" : "plain");
    std::vector<std::string> program = {RUN_PROBE, "sleep"};
    Start start;
    start.terminal = true;
    BackgroundProcess process(Options(profiled ? UnderHeaprec(cwd, program) : program, cwd, start));
    pid_t program_pid = process.WaitUntilReady();
    ASSERT_GT(program_pid, 0) << process.Stderr();
    const double interrupted = MonotonicSeconds();
    ASSERT_EQ(write(process.master(), "\x03", 1), 1);
    RunResult ended = process.Wait();
    const double took = MonotonicSeconds() - interrupted;
    EXPECT_EQ(ended.status, 130) << ended.err;
    EXPECT_LT(took, 1.0) << ended.err;
    EXPECT_TRUE(IsGone(program_pid));
    EXPECT_TRUE(GroupIsGone(process.pid()));
    if (profiled) {
      EXPECT_TRUE(Contains(ended.err, "heaprec: the program was killed by signal 2 (SIGINT)\n"))
          << ended.err;
    }
  }
}

// heaprec receives the terminal's SIGINT too, and must not pass it on: the program, which
// survives SIGINT, counts one, as it does without heaprec.
TEST_F(RunSignalsTest, CtrlCOnTheTerminalReachesTheProgramOnce) {
  ASSERT_TRUE(HavePty()) << "no pseudo-terminal to type Ctrl-C on (/dev/ptmx)";
  std::vector<std::string> outputs;
  for (bool profiled : {false, true}) {
    SCOPED_TRACE(profiled ? "under heaprec" : "plain");
    std::string cwd = RunDirectory(profiled ? "heaprec" : "plain");
    std::vector<std::string> program = {RUN_PROBE, "count-sigint"};
    Start start;
    start.terminal = true;
    BackgroundProcess process(Options(profiled ? UnderHeaprec(cwd, program) : program, cwd, start));
    pid_t program_pid = process.WaitUntilReady();
    ASSERT_GT(program_pid, 0) << process.Stderr();
    ASSERT_EQ(write(process.master(), "\x03", 1), 1);
    RunResult ended = process.Wait();
    EXPECT_EQ(ended.status, 0) << ended.err;
    outputs.push_back(ended.out.substr(ended.out.find('\n') + 1));  // past "ready PID"
  }
  EXPECT_EQ(outputs[0], "SIGINT received 1 time(s)\n");
  EXPECT_EQ(outputs[1], outputs[0]);
}

// SIGINT sent to heaprec's process group from outside (as a terminal would, but with kill): both
// end, heaprec within a second with status 130.
TEST_F(RunSignalsTest, SigintToTheProcessGroupEndsBoth) {
  std::string cwd = RunDirectory("heaprec");
  BackgroundProcess heaprec(Options(UnderHeaprec(cwd, {RUN_PROBE, "sleep"}), cwd, Start{}));
  pid_t program_pid = heaprec.WaitUntilReady();
  ASSERT_GT(program_pid, 0) << heaprec.Stderr();
  const double interrupted = MonotonicSeconds();
  ASSERT_EQ(kill(-heaprec.pid(), SIGINT), 0);
  RunResult ended = heaprec.Wait();
  EXPECT_LT(MonotonicSeconds() - interrupted, 1.0) << ended.err;
  EXPECT_EQ(ended.status, 130) << ended.err;
  EXPECT_TRUE(IsGone(program_pid)) << "the program outlived heaprec";
  EXPECT_TRUE(GroupIsGone(heaprec.pid()));
}

// A signal sent to heaprec alone (kill or sigqueue) is meant for the program: heaprec passes it on
// and exits with the status the program's death gives, as the program alone would.
TEST_F(RunSignalsTest, SignalsSentToHeaprecAreForwarded) {
  struct Case {
    int signal_number;
    bool queued;  // sigqueue (SI_QUEUE) rather than kill (SI_USER)
  };
  for (const Case& c : {Case{SIGTERM, false}, Case{SIGHUP, false}, Case{SIGQUIT, false},
                        Case{SIGUSR1, true}, Case{SIGUSR2, false}}) {
    SCOPED_TRACE(SignalName(c.signal_number));
    for (bool profiled : {false, true}) {
      SCOPED_TRACE(profiled ? "under heaprec" : "plain");
      std::string cwd =
          RunDirectory((profiled ? "heaprec" : "plain") + std::to_string(c.signal_number));
      std::vector<std::string> program = {RUN_PROBE, "sleep"};
      BackgroundProcess process(
          Options(profiled ? UnderHeaprec(cwd, program) : program, cwd, Start{}));
      pid_t program_pid = process.WaitUntilReady();
      ASSERT_GT(program_pid, 0) << process.Stderr();
      if (c.queued) {
        ASSERT_EQ(sigqueue(process.pid(), c.signal_number, sigval{}), 0);
      } else {
        ASSERT_EQ(kill(process.pid(), c.signal_number), 0);
      }
      RunResult ended = process.Wait();
      EXPECT_EQ(ended.status, 128 + c.signal_number) << ended.err;
      EXPECT_TRUE(IsGone(program_pid));
    }
  }
}

// The program's ignored and blocked signals are what heaprec found, whatever heaprec does with its
// own: a SIGINT (and SIGHUP, as with nohup) ignored by heaprec's parent stays ignored, and so does
// SIGCHLD, which heaprec itself needs to wait for the program.
TEST_F(RunSignalsTest, SignalStateIsTheProgramsOwn) {
  std::vector<Start> starts(4);
  starts[1].ignored = {SIGINT, SIGHUP};  // as nohup, or a script's background job
  starts[2].blocked = {SIGTERM, SIGUSR1, SIGINT};
  starts[3].ignored = {SIGCHLD};  // which heaprec, to wait for the program, must not
  std::vector<std::string> outputs;
  for (const Start& start : starts) {
    auto [plain, profiled] = RunBoth({RUN_PROBE, "sigstate"}, start);
    EXPECT_EQ(plain.status, 0) << plain.err;
    EXPECT_EQ(profiled.status, 0) << profiled.err;
    EXPECT_EQ(profiled.out, plain.out);
    outputs.push_back(profiled.out);
  }
  // The comparisons are not between two wrong answers: bit N-1 stands for signal N.
  EXPECT_EQ(outputs[0], "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
  EXPECT_TRUE(Contains(outputs[1], "SigIgn:\t0000000000000003\n")) << outputs[1];
  EXPECT_TRUE(Contains(outputs[2], "SigBlk:\t0000000000004202\n")) << outputs[2];
  EXPECT_TRUE(Contains(outputs[3], "SigIgn:\t0000000000010000\n")) << outputs[3];
}

// How `run_probe fds` is started for the descriptor tests.
enum class Launcher {
  kPlain,    // as is
  kPreload,  // with LD_PRELOAD=libheaprec.so, as a user could without heaprec run
  kHeaprec,  // under heaprec run
};

// The ways a program may find its standard descriptors: all open, one of them closed, and one
// more inherited descriptor (9).
std::vector<Start> DescriptorStarts() {
  std::vector<Start> starts(5);
  starts[1].closed = {0};
  starts[2].closed = {1};
  starts[3].closed = {2};
  starts[4].extra_descriptor = true;
  return starts;
}

std::string Describe(const Start& start) {
  if (start.extra_descriptor) return "descriptor 9 inherited";
  return start.closed.empty() ? "all open" : "closed: " + std::to_string(start.closed[0]);
}

class RunDescriptorsTest : public RunSignalsTest {
 protected:
  // What `run_probe fds` lists, started as `start` by `how`, with the run's directory as DIR and
  // pipe numbers (pipe:[N]) left out: they are all that differs between two runs. Without
  // `library_files`, the files the library may have open for a moment (profiles it is writing,
  // DIR/p.*) are left out too.
  std::string Listing(const Start& start, Launcher how, bool library_files = true) {
    std::string cwd = RunDirectory("fds" + std::to_string(++runs_));
    std::vector<std::string> program = {RUN_PROBE, "fds", cwd + "/fds"};
    EnvChanges env;
    if (how == Launcher::kPreload) {
      env = {{"LD_PRELOAD", HEAPREC_LIB}, {"HEAPREC_OUTPUT", cwd + "/p.%p.pb.gz"}};
    }
    RunResult ended =
        BackgroundProcess(Options(how == Launcher::kHeaprec ? UnderHeaprec(cwd, program) : program,
                                  cwd, start, env))
            .Wait();
    EXPECT_EQ(ended.status, 0) << ended.err;
    std::string listing = ReadFile(cwd + "/fds");
    for (size_t at; (at = listing.find(cwd)) != std::string::npos;) {
      listing.replace(at, cwd.size(), "DIR");
    }
    for (size_t at = listing.find("pipe:["); at != std::string::npos;
         at = listing.find("pipe:[", at + 1)) {
      listing.erase(at + 6, listing.find(']', at) - (at + 6));
    }
    if (library_files) return listing;
    std::string kept;
    for (const std::string& line : Lines(listing)) {
      if (!Contains(line, " -> DIR/p.")) kept += line + "\n";
    }
    return kept;
  }
};

// The program's descriptors are the ones it would inherit without heaprec: heaprec's own (status
// pipe, manifest, placeholders for closed standard descriptors) never reach it. With descriptor
// 0, 1 or 2 closed the program still finds it closed; one more inherited descriptor is still
// there.
//
// This also needs the preload library to leave no descriptor of its own in the program.
TEST_F(RunDescriptorsTest, DescriptorsAreTheProgramsOwn) {
  for (const Start& start : DescriptorStarts()) {
    SCOPED_TRACE(Describe(start));
    std::string plain = Listing(start, Launcher::kPlain);
    EXPECT_EQ(Listing(start, Launcher::kHeaprec), plain);
    // Not two wrong answers: the closed descriptor is closed, the extra one open.
    for (int fd : start.closed) EXPECT_FALSE(HasDescriptor(plain, fd)) << plain;
    EXPECT_EQ(HasDescriptor(plain, 9), start.extra_descriptor) << plain;
  }
}

// heaprec run's own part of the above, whatever the library does: the program sees the same
// descriptors under heaprec run as with the library preloaded by hand. A profile the library
// happens to be writing while the program lists its descriptors is not heaprec's: left out.
TEST_F(RunDescriptorsTest, HeaprecAddsNoDescriptorOfItsOwn) {
  for (const Start& start : DescriptorStarts()) {
    SCOPED_TRACE(Describe(start));
    EXPECT_EQ(Listing(start, Launcher::kHeaprec, false), Listing(start, Launcher::kPreload, false));
  }
}

// A static executable never loads libheaprec.so: heaprec says so in one line, then runs it
// unprofiled, with its status. Found through PATH as execvp would; static-pie too.
TEST_F(RunSignalsTest, StaticExecutableRunsUnprofiled) {
  for (const std::string& program : {std::string(RUN_STATIC), std::string(RUN_STATIC_PIE)}) {
    auto [plain, profiled] = RunBoth({program});
    EXPECT_EQ(plain.status, 4);
    EXPECT_EQ(profiled.status, 4) << profiled.err;
    EXPECT_EQ(profiled.out, plain.out);
    EXPECT_TRUE(Contains(profiled.err, "heaprec: " + program +
                                           " is statically linked; LD_PRELOAD cannot reach it, "
                                           "so it will run unprofiled\n"))
        << profiled.err;
    EXPECT_FALSE(Contains(profiled.err, "no profile was written")) << profiled.err;
  }
  std::filesystem::path static_program = RUN_STATIC;
  std::string cwd = RunDirectory("by-name");
  RunResult by_name =
      BackgroundProcess(
          Options(UnderHeaprec(cwd, {static_program.filename().string()}), cwd, Start{},
                  {{"PATH", "/nonexistent::" + static_program.parent_path().string()}}))
          .Wait();
  EXPECT_EQ(by_name.status, 4) << by_name.err;
  EXPECT_TRUE(Contains(by_name.err,
                       "heaprec: " + static_program.filename().string() + " is statically linked"))
      << by_name.err;
}

// Dynamic programs and scripts get no such line.
TEST_F(RunSignalsTest, DynamicProgramsAndScriptsAreNotCalledStatic) {
  std::string script = dir_ / "script.sh";
  std::string text = "#!/bin/sh\nexec " + std::string(RUN_PROBE) + " exit 0\n";
  int fd = open(script.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0700);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  close(fd);
  for (const std::vector<std::string>& program :
       {std::vector<std::string>{RUN_PROBE, "exit", "0"}, std::vector<std::string>{script}}) {
    auto [plain, profiled] = RunBoth(program);
    EXPECT_EQ(profiled.status, 0) << profiled.err;
    EXPECT_FALSE(Contains(profiled.err, "statically linked")) << profiled.err;
  }
}

// heaprec says how the program ended, in the shell's terms and in words.
TEST_F(RunSignalsTest, SaysHowTheProgramEnded) {
  auto [plain_exit, exited] = RunBoth({RUN_PROBE, "exit", "3"});
  EXPECT_EQ(plain_exit.status, 3);
  EXPECT_EQ(exited.status, 3) << exited.err;
  EXPECT_TRUE(Contains(exited.err, "heaprec: the program exited with status 3\n")) << exited.err;

  for (bool core_dumps : {false, true}) {
    SCOPED_TRACE(core_dumps ? "core dumps allowed" : "no core dumps");
    Start start;
    start.core_dumps = core_dumps;
    auto [plain, crashed] = RunBoth({RUN_PROBE, "segv"}, start);
    EXPECT_EQ(plain.status, 139);
    EXPECT_EQ(crashed.status, 139) << crashed.err;
    // Whether a core is dumped is the system's choice (RLIMIT_CORE, core_pattern): as plainly.
    std::string expected = "heaprec: the program was killed by signal 11 (SIGSEGV)" +
                           std::string(WCOREDUMP(plain.wait_status) ? ", core dumped" : "") + "\n";
    EXPECT_TRUE(Contains(crashed.err, expected)) << crashed.err;
  }
}

// SIGKILL before anything was sampled: no peak profile and no heap record yet (the record starts
// with the first peak capture; heap_record_test.cc has the killed process that held more), so the
// "no profile was written" line. The probe allocates a few KiB (stdout's buffer): at the default
// interval one run in about 130 sampled that buffer, whose weight (512 KiB) made a peak and a
// record that heaprec run recovered. A 1 GiB interval and a fixed seed put the first sample point
// far beyond them, every run.
TEST_F(RunSignalsTest, NoProfileAfterAnEarlySigkill) {
  std::string cwd = RunDirectory("heaprec");
  BackgroundProcess heaprec(
      Options(UnderHeaprec(cwd, {RUN_PROBE, "sleep"}, {"--sample-interval", "1G", "--seed", "1"}),
              cwd, Start{}));
  pid_t program_pid = heaprec.WaitUntilReady();
  ASSERT_GT(program_pid, 0) << heaprec.Stderr();
  ASSERT_EQ(kill(program_pid, SIGKILL), 0);
  RunResult ended = heaprec.Wait();
  EXPECT_EQ(ended.status, 137) << ended.err;
  EXPECT_TRUE(Contains(ended.err, "heaprec: the program was killed by signal 9 (SIGKILL)\n"))
      << ended.err;
  EXPECT_TRUE(Contains(ended.err, "heaprec: no profile was written (")) << ended.err;
}

// A process that frees what it allocated leaves an empty final profile: heaprec points at the peak
// profile, which holds what it had. Exact sampling: the bytes are known.
TEST_F(RunSignalsTest, NearlyEmptyFinalProfilePointsAtThePeak) {
  auto [plain, profiled] =
      RunBoth({RUN_PROBE, "peak", "8388608"}, Start{}, {"--sample-interval", "1", "--top", "0"});
  EXPECT_EQ(profiled.status, 0) << profiled.err;
  EXPECT_TRUE(Contains(profiled.err, "(pid ")) << profiled.err;
  EXPECT_TRUE(
      Contains(profiled.err, ", exit: the process ended with exit() or a return from main)"))
      << profiled.err;
  EXPECT_TRUE(Contains(profiled.err, "heaprec: the final profile of pid ")) << profiled.err;
  EXPECT_TRUE(Contains(profiled.err, ".peak.pb.gz holds ")) << profiled.err;
}

// What the library could not print (the program's stderr was redirected) comes through the
// manifest, and heaprec prints it; a path listed several times (a peak profile rewritten as the
// peak grows) is listed once. The program stands in for the library here.
TEST_F(RunSignalsTest, ManifestMessagesAndRepeatedPaths) {
  auto [plain_first, first] = RunBoth({RUN_PROBE, "exit", "0"});
  ASSERT_EQ(first.status, 0) << first.err;
  std::vector<std::string> written = ListProfiles(dir_ / ("heaprec" + std::to_string(runs_)));
  ASSERT_FALSE(written.empty()) << first.err;
  std::string repeated = dir_ / "repeated.pb.gz";
  std::filesystem::copy_file(written[0], repeated);

  auto [plain_peak, peak] = RunBoth({RUN_PROBE, "manifest", "peak", repeated, "3"});
  EXPECT_EQ(peak.status, 0) << peak.err;
  EXPECT_EQ(Count(peak.err, "  " + repeated + "  (pid "), 1u) << peak.err;

  auto [plain_message, message] =
      RunBoth({RUN_PROBE, "manifest", "message", "could not write profile 'x': disk full", "1"});
  EXPECT_TRUE(Contains(message.err, "\nheaprec: could not write profile 'x': disk full\n"))
      << message.err;
  auto [plain_prefixed, prefixed] =
      RunBoth({RUN_PROBE, "manifest", "message", "heaprec: already prefixed", "1"});
  EXPECT_EQ(Count(prefixed.err, "heaprec: already prefixed\n"), 1u) << prefixed.err;
  EXPECT_FALSE(Contains(prefixed.err, "heaprec: heaprec")) << prefixed.err;
}

// A program that starts many processes (a shell loop here; a build in real life): heaprec lists the
// program's own profiles and sums up the others in one line (how many, from how many processes,
// by reason, where) instead of a line per profile. The numbers are checked against the files.
TEST_F(RunSignalsTest, ManyProfilesAreSummedUp) {
  auto [plain, run] =
      RunBoth({"/bin/sh", "-c", "for i in $(seq 30); do /bin/true; done; echo done"});
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, plain.out);
  const std::string dir = dir_ / ("heaprec" + std::to_string(runs_));
  size_t files = ListProfiles(dir, false).size() + ListProfiles(dir, true).size();
  ASSERT_GT(files, 30u) << run.err;  // 30 exit profiles of /bin/true, the shell's own
  EXPECT_TRUE(Contains(run.err, "heaprec: wrote " + std::to_string(files) + " profiles:\n"))
      << run.err;
  size_t listed = 0;
  for (const std::string& line : Lines(run.err)) listed += line.rfind("  " + dir + "/", 0) == 0;
  EXPECT_LE(listed, 2u) << run.err;  // the shell's final profile, and its peak profile if any
  EXPECT_TRUE(Contains(run.err, "  and " + std::to_string(files - listed) + " more from "))
      << run.err;
  EXPECT_TRUE(Contains(run.err, " exit") && Contains(run.err, ") in " + dir + "\n")) << run.err;
  // The list and its summary line stay short (the top sites' report follows them).
  std::string list = run.err.substr(0, run.err.find("\nFile: "));
  EXPECT_LT(Lines(list).size(), 10u) << run.err;
}

}  // namespace
}  // namespace heaprec::e2e
