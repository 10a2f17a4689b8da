// The dumps a process is asked for while it runs: the dump signal taken over or ignored by the
// program, and an exec chain with interval dumps that must not overwrite each other. The program
// is programs/rel_endings.cc (endings_util.h: how the tests drive it).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "endings_util.h"

namespace heaprec::reliability {
namespace {

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
