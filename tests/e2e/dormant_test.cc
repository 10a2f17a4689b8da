// Dormant mode (heaprec run --dormant, docs/design/dormant.md): a process that is never attached
// writes nothing and runs as without heaprec; `heaprec attach PID` makes its profiles hold what it
// allocates from then on and nothing from before; `heaprec detach PID` stops sampling again while
// what was sampled stays. The workload (tests/workloads/wl_dormant.c) moves from phase to phase on
// lines from the test, so nothing here waits on time.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "e2e_util.h"
#include "profile/pprof_reader.h"

namespace heaprec::e2e {
namespace {

const std::vector<std::string> kDormantFlags = {"--dormant", "--dump-signal", "SIGUSR2",
                                                "--sample-interval", "1"};

// The workload under `heaprec run FLAGS`, its stdin a pipe from the test.
BackgroundOptions Workload(const TempDir& dir, const std::vector<std::string>& flags,
                           const std::vector<std::string>& args = {}) {
  BackgroundOptions options;
  std::vector<std::string> program = {WL_DORMANT};
  program.insert(program.end(), args.begin(), args.end());
  options.argv = HeaprecArgv(dir.path(), flags, program);
  options.cwd = dir.path();
  options.stdin_pipe = true;
  return options;
}

// `heaprec attach|detach PID`, run in a directory of its own (RunProgram's files).
RunResult Control(const std::string& command, const std::string& pid) {
  TempDir cwd;
  return RunProgram({HEAPREC_BIN, command, pid}, cwd.path(), {}, 30);
}

// The workload under `heaprec run FLAGS`, once it said "ready PID" (pid: -1 if it never did).
struct Started {
  explicit Started(const TempDir& dir, const std::vector<std::string>& flags = kDormantFlags)
      : process(Workload(dir, flags)), pid(process.WaitUntilReady()) {}
  // `heaprec attach|detach PID`, which must succeed.
  void Command(const std::string& command) const {
    RunResult result = Control(command, std::to_string(pid));
    EXPECT_EQ(result.status, 0) << result.err;
  }
  BackgroundProcess process;
  pid_t pid;
};

// A test that starts with the workload running dormant.
class DormantProcess : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_GT(pid, 0) << process.Stderr(); }
  TempDir dir;
  Started started{dir};
  BackgroundProcess& process = started.process;
  const pid_t pid = started.pid;
};

void Step(BackgroundProcess& process, const std::string& command) {
  process.Send(command);
  ASSERT_FALSE(process.WaitForLine("done " + command).empty()) << process.Stderr();
}

Profile FinalProfile(const TempDir& dir) {
  std::vector<std::string> files = ListProfiles(dir.path());
  if (files.size() != 1) {
    ADD_FAILURE() << files.size() << " profiles";
    return {};
  }
  return ReadProfileFile(files[0]);
}

TEST(Dormant, NeverAttachedWritesNothingAndChangesNothing) {
  TempDir plain_dir, dir;
  BackgroundOptions plain_options;
  plain_options.argv = {WL_DORMANT};
  plain_options.cwd = plain_dir.path();
  plain_options.stdin_pipe = true;
  BackgroundProcess plain(plain_options);
  BackgroundProcess dormant(Workload(dir, kDormantFlags));
  for (BackgroundProcess* p : {&plain, &dormant}) {
    ASSERT_GT(p->WaitUntilReady(), 0);
    Step(*p, "churn");
    p->Send("exit");
  }
  RunResult plain_result = plain.Wait(), result = dormant.Wait();
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(result.status, plain_result.status);
  // The same output but for the pid in "ready PID".
  EXPECT_EQ(Lines(result.out).size(), Lines(plain_result.out).size());
  EXPECT_EQ(Lines(result.out).back(), "bye");
  EXPECT_TRUE(ListProfiles(dir.path()).empty());
  EXPECT_TRUE(ListProfiles(dir.path(), true).empty());
  EXPECT_NE(result.err.find("no profile was written (dormant, never attached)"), std::string::npos)
      << result.err;
}

TEST_F(DormantProcess, APlainDumpSignalWhileDormantWritesNothingAndSaysSo) {
  ASSERT_EQ(kill(pid, SIGUSR2), 0);
  // The dump thread answers on stderr; the program, still running, answers the next line.
  for (int i = 0; i < 3000 && process.Stderr().find("never attached") == std::string::npos; ++i) {
    usleep(1000);
  }
  EXPECT_NE(process.Stderr().find("heaprec: sampling is off (dormant, never attached): no profile "
                                  "written"),
            std::string::npos)
      << process.Stderr();
  Step(process, "churn");
  process.Send("exit");
  EXPECT_EQ(process.Wait().status, 0);
  EXPECT_TRUE(ListProfiles(dir.path()).empty());
}

TEST_F(DormantProcess, AttachRecordsWhatFollowsAndNothingFromBefore) {
  RunResult attach = Control("attach", std::to_string(pid));
  ASSERT_EQ(attach.status, 0) << attach.err;
  EXPECT_NE(attach.out.find("samples now"), std::string::npos) << attach.out;
  Step(process, "alloc_attached");
  Step(process, "free_pre");  // pre-attach blocks reallocated and freed on four threads
  Step(process, "churn");
  process.Send("exit");
  RunResult result = process.Wait();
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.err.find("heaprec: sampling on (attach)"), std::string::npos) << result.err;
  Profile profile = FinalProfile(dir);
  EXPECT_EQ(SiteValues(profile, "post_attach_site").inuse_space, 100 * 1000);
  EXPECT_EQ(SiteValues(profile, "post_attach_site").inuse_objects, 100);
  EXPECT_EQ(SiteValues(profile, "pre_attach_hold"), Values{});
  EXPECT_EQ(SiteValues(profile, "pre_attach_pool"), Values{});
  // The pool's reallocations were allocations made while attached: recorded, then freed.
  EXPECT_EQ(SiteValues(profile, "free_share").inuse_objects, 0);
  EXPECT_EQ(SiteValues(profile, "free_share").alloc_objects, 4000);
  EXPECT_EQ(SiteValues(profile, "churn_site").alloc_objects, 10000);
  EXPECT_EQ(SiteValues(profile, "churn_site").inuse_objects, 0);
  EXPECT_EQ(CommentValue(profile, "missed_frees"), 0);
  EXPECT_EQ(CommentValue(profile, "attached"), 1);
  EXPECT_GT(CommentValue(profile, "attached_at"), 0);
}

TEST_F(DormantProcess, DetachStopsSamplingAndKeepsWhatWasSampled) {
  started.Command("attach");
  Step(process, "alloc_attached");
  started.Command("detach");
  Step(process, "alloc_detached");
  Step(process, "churn");
  // A dump after detach still shows what was sampled while attached.
  ASSERT_EQ(kill(pid, SIGUSR2), 0);
  for (int i = 0; i < 3000 && ListProfiles(dir.path()).empty(); ++i) usleep(1000);
  process.Send("exit");
  RunResult result = process.Wait();
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.err.find("heaprec: sampling off (detach)"), std::string::npos) << result.err;
  std::vector<std::string> files = ListProfiles(dir.path());
  ASSERT_EQ(files.size(), 2u) << result.err;  // the signal's dump and the final profile
  for (const std::string& file : files) {
    Profile profile = ReadProfileFile(file);
    EXPECT_EQ(SiteValues(profile, "post_attach_site").inuse_space, 100 * 1000) << file;
    EXPECT_EQ(SiteValues(profile, "after_detach_site"), Values{}) << file;
    EXPECT_EQ(SiteValues(profile, "churn_site"), Values{}) << file;
    EXPECT_EQ(CommentValue(profile, "attached"), 1) << file;
  }
}

TEST_F(DormantProcess, AttachAgainAfterDetachCountsBothAttaches) {
  started.Command("attach");
  started.Command("detach");
  Step(process, "alloc_detached");
  started.Command("attach");
  Step(process, "alloc_attached");
  process.Send("exit");
  ASSERT_EQ(process.Wait().status, 0);
  Profile profile = FinalProfile(dir);
  EXPECT_EQ(CommentValue(profile, "attached"), 2);
  EXPECT_EQ(SiteValues(profile, "post_attach_site").inuse_objects, 100);
  EXPECT_EQ(SiteValues(profile, "after_detach_site"), Values{});
}

TEST_F(DormantProcess, AForkedChildKeepsItsParentsState) {
  Step(process, "fork");  // a dormant child: it writes nothing
  EXPECT_TRUE(ListProfiles(dir.path()).empty());
  started.Command("attach");
  Step(process, "fork");  // an attached child: its own final profile, its own allocations in it
  process.Send("exit");
  ASSERT_EQ(process.Wait().status, 0);
  std::vector<std::string> files = ListProfiles(dir.path());
  ASSERT_EQ(files.size(), 2u);
  int children = 0;
  for (const std::string& file : files) {
    Profile profile = ReadProfileFile(file);
    EXPECT_EQ(CommentValue(profile, "attached"), 1) << file;
    if (CommentValue(profile, "pid") == pid) {
      EXPECT_EQ(SiteValues(profile, "child_site"), Values{}) << file;
    } else {
      ++children;
      EXPECT_EQ(SiteValues(profile, "child_site").inuse_objects, 100) << file;
      EXPECT_EQ(SiteValues(profile, "pre_attach_hold"), Values{}) << file;
    }
  }
  EXPECT_EQ(children, 1);
}

// One line on stderr, starting with the command, and status 1 (2: a bad command line).
void ExpectRefusal(const RunResult& result, const std::string& command, const std::string& text,
                   int status = 1) {
  EXPECT_EQ(result.status, status) << result.err;
  EXPECT_EQ(Lines(result.err).size(), 1u) << result.err;
  EXPECT_EQ(result.err.rfind("heaprec " + command + ": ", 0), 0u) << result.err;
  EXPECT_NE(result.err.find(text), std::string::npos) << result.err;
  EXPECT_TRUE(result.out.empty()) << result.out;
}

TEST(Dormant, AttachRefusesWhatItCannotCommandInOneLine) {
  ExpectRefusal(Control("attach", "12x"), "attach", "PID '12x' is invalid", 2);
  // A pid that was just reaped: nobody has it (pids are not reused this fast).
  pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_GT(child, 0);
  waitpid(child, nullptr, 0);
  ExpectRefusal(Control("detach", std::to_string(child)), "detach", "no process");
  // This test: heaprec is not loaded here, so there is nothing to detach (attach would load it:
  // tests/attach).
  ExpectRefusal(Control("detach", std::to_string(getpid())), "detach",
                "is not profiled by heaprec");
  // Profiled from the start, without a dump signal or with one: not dormant, nothing to attach.
  struct Case {
    std::vector<std::string> flags;
    const char* text;
  };
  for (const Case& c :
       {Case{{}, "is profiled by heaprec from its start already"},
        Case{{"--dump-signal", "SIGUSR2"}, "is profiled by heaprec from its start"}}) {
    TempDir dir;
    Started started(dir, c.flags);
    ASSERT_GT(started.pid, 0);
    ExpectRefusal(Control("attach", std::to_string(started.pid)), "attach", c.text);
    started.process.Send("exit");
    EXPECT_EQ(started.process.Wait().status, 0);
  }
}

TEST(Dormant, DormantNeedsADumpSignal) {
  TempDir dir;
  RunResult run = HeaprecRun(dir.path(), {"--dormant"}, {WL_DORMANT});
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(Lines(run.err).size(), 1u) << run.err;
  EXPECT_EQ(run.err.rfind("heaprec run: --dormant needs --dump-signal", 0), 0u) << run.err;
  // The library's own check: one line, and the program runs unprofiled.
  RunResult plain = RunProgram({WL_DORMANT}, dir.path(),
                               {{"LD_PRELOAD", HEAPREC_LIB}, {"HEAPREC_DORMANT", "1"}}, 30);
  EXPECT_EQ(plain.status, 0);
  EXPECT_EQ(Lines(plain.err).size(), 1u) << plain.err;
  EXPECT_NE(plain.err.find("HEAPREC_DORMANT='1' is invalid"), std::string::npos) << plain.err;
  EXPECT_TRUE(ListProfiles(dir.path()).empty());
}

}  // namespace
}  // namespace heaprec::e2e
