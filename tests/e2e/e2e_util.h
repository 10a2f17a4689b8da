// Helpers for the end-to-end tests: running programs with and without heaprec, and summing the
// profiles they leave per allocation site.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "profile/profile.h"

namespace heaprec::e2e {

using namespace ::heaprec::profile;

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct RunResult {
  int status = -1;      // exit status, or 128 + signal
  int wait_status = 0;  // as waitpid gave it: the terminating signal's core-dump flag included
  std::string out;      // stdout
  std::string err;      // stderr
};

// Environment changes for a child: a value sets the variable, nullopt removes it.
using EnvChanges = std::map<std::string, std::optional<std::string>>;

// Status RunProgram reports for a run that its hang guard had to kill.
inline constexpr int kHung = 124;

// Runs `argv` (argv[0] a path) in the directory `cwd` with the test's environment minus LD_PRELOAD,
// every HEAPREC_* variable and DEBUGINFOD_URLS, plus `env`; stdin /dev/null; stdout and stderr
// captured through files in `cwd`. The program runs in its own process group with default signal
// handling.
//
// With `timeout_s` > 0, a hang guard: if the program has not exited after that many seconds the
// whole group is killed with SIGKILL and the status is kHung. The guard is in this process rather
// than a `timeout` command so that nothing but the program itself is preloaded. It is a guard
// against deadlocks only; no test depends on how fast anything runs.
RunResult RunProgram(const std::vector<std::string>& argv, const std::string& cwd,
                     const EnvChanges& env = {}, int timeout_s = 0);

// How BackgroundProcess starts a program. Always: in `cwd`, in a process group of its own (with
// `terminal`, a session of its own), with every signal at its default disposition and unblocked
// unless listed below, the environment RunProgram gives (ChildEnvironment(env)), stdout and stderr
// to <cwd>/out and <cwd>/err, and no descriptor of the test's beyond those.
struct BackgroundOptions {
  std::vector<std::string> argv;  // argv[0] a path
  std::string cwd;
  EnvChanges env;
  // stdin is /dev/null unless one of these two.
  bool stdin_pipe = false;   // a pipe from the test: BackgroundProcess::Send
  bool terminal = false;     // a pty, the controlling terminal of the new session: master()
  std::vector<int> ignored;  // signals ignored, as nohup or a non-interactive shell leaves them
  std::vector<int> blocked;  // signals blocked
  std::vector<int> closed;   // descriptors closed, the standard ones included
  bool extra_descriptor = false;  // descriptor 9 open on /dev/null, inherited
  bool core_dumps = false;        // RLIMIT_CORE raised to its hard limit (else 0: no core files)
  // The hang guard of WaitForLine and Wait: far beyond any run, only a deadlock reaches it.
  double guard_seconds = 30;
};

// A program the test talks to while it runs: it waits for lines on the program's stdout, writes
// to its stdin, signals it (pid(), or the group: -pid()), then waits for its end. RunProgram is for
// a program that needs nothing of the test until it ends. Files rather than pipes for stdout and
// stderr, so that nothing the program writes can block it while the test is busy elsewhere.
//
// Destruction kills whatever is left in the process group with SIGKILL (and reaps the program if
// Wait did not), so that a failed assertion leaves nothing running. Wait itself kills nothing but
// a hung program: a test may check that the program's group is gone by itself.
class BackgroundProcess {
 public:
  explicit BackgroundProcess(const BackgroundOptions& options);
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  pid_t pid() const { return pid_; }
  int master() const { return master_; }  // the pty's master side (BackgroundOptions::terminal)

  // Waits until stdout has a whole line starting with `prefix`; returns the line ("" if the
  // process ended without it or the guard's deadline passed).
  std::string WaitForLine(const std::string& prefix) const;
  // Waits for a line "WHAT PID" and returns PID (-1 if it never came).
  pid_t WaitUntilReady(const std::string& what = "ready") const;

  // Writes one line to the program's stdin (BackgroundOptions::stdin_pipe); a gtest failure if it
  // cannot.
  void Send(const std::string& line);
  // Closes the program's stdin (BackgroundOptions::stdin_pipe): it reads end-of-file.
  void CloseStdin();

  // What the process wrote to stderr so far, for failure messages.
  std::string Stderr() const;

  // Waits for the process to end; after the guard's deadline, kills its group (status kHung).
  RunResult Wait();

 private:
  std::string cwd_;
  double guard_seconds_;
  pid_t pid_ = -1;
  int stdin_ = -1;   // the pipe's write side
  int master_ = -1;  // the pty's master side
  bool reaped_ = false;
};

// Seconds on the monotonic clock: for deadlines, and for timing what a test times.
double MonotonicSeconds();

// `heaprec run -o <dir>/p.%p.pb.gz FLAGS -- PROGRAM...`: the command line HeaprecRun runs.
std::vector<std::string> HeaprecArgv(const std::string& dir, const std::vector<std::string>& flags,
                                     const std::vector<std::string>& program);

// `heaprec run -o <dir>/p.%p.pb.gz FLAGS -- PROGRAM...`, run in `dir`.
RunResult HeaprecRun(const std::string& dir, const std::vector<std::string>& flags,
                     const std::vector<std::string>& program, const EnvChanges& env = {});

// Files in `dir` whose names end in ".pb.gz", sorted.
// The profiles in `dir`, sorted: the ordinary ones, or (peak = true) the peak-heap ones
// (NAME.peak.pb.gz, written at exit next to the final profile).
std::vector<std::string> ListProfiles(const std::string& dir, bool peak = false);

std::string ReadFile(const std::string& path);

// This process's environment for a child: without LD_PRELOAD, HEAPREC_* and DEBUGINFOD_URLS (a
// test says what it wants), with `env` applied (a value sets a variable, nullopt removes it).
std::vector<std::string> ChildEnvironment(const EnvChanges& env);

// Lines of `text`, without their newlines.
std::vector<std::string> Lines(const std::string& text);

// The four values of heaprec's heap profiles, summed over some samples.
struct Values {
  int64_t alloc_objects = 0;
  int64_t alloc_space = 0;
  int64_t inuse_objects = 0;
  int64_t inuse_space = 0;
  bool operator==(const Values&) const = default;
};
std::ostream& operator<<(std::ostream& out, const Values& v);

// Whether some line of some location of the sample's stack is the function `name` (C name, or a
// demangled C++ name with its parameter list: "site_new_live(long)" matches "site_new_live").
bool StackHas(const Profile& profile, const Sample& sample, const std::string& name);

// Sums the samples whose stack contains `site`.
Values SiteValues(const Profile& profile, const std::string& site);
// Sums every sample.
Values TotalValues(const Profile& profile);

// One (stack, size) sample of the profile as (inuse_objects, bytes label): for the samples whose
// stacks contain none of `sites`.
struct ObjectGroup {
  int64_t objects = 0;
  int64_t size = 0;
};
std::vector<ObjectGroup> OtherLiveGroups(const Profile& profile,
                                         const std::vector<std::string>& sites);

// The values of the comment field NAME=VALUE in every comment, in order (a comment holds several
// fields, separated by spaces).
std::vector<std::string> CommentValues(const Profile& profile, const std::string& name);
// The first value of the comment field `name`, or "" when there is none.
std::string CommentText(const Profile& profile, const std::string& name);
// The same as a number, or -1.
int64_t CommentValue(const Profile& profile, const std::string& name);

// Var(X) for the estimate X = sum over sampled objects of n / p of the live bytes of `objects`
// objects of `size` bytes each, at sampling interval `interval`: objects * n^2 * (1 - p) / p with
// p = 1 - exp(-(n + 1) / interval). See sampled_test.cc for the derivation.
double SampledBytesVariance(double objects, double size, double interval);

// 1 - exp(-(n + 1) / interval): the probability that an n-byte allocation is sampled.
double SampleProbability(double size, double interval);

// One function row of `heaprec report`'s text: "FLAT UNIT FLAT% SUM% CUM UNIT CUM% FUNCTION
// [FILE:LINE]" (a function's name may hold spaces: "(anonymous namespace)::f", "<T as U>::m").
struct ReportRow {
  std::string function;
  std::string file;
  int line = 0;
};
// The function rows of an exact (unsampled) report, in order.
std::vector<ReportRow> ReportRows(const std::string& report);

// The number of the first line of `source` that ends with `marker` ("// site: NAME"), 0 if none.
int MarkedLine(const std::string& source, const std::string& marker);

}  // namespace heaprec::e2e
