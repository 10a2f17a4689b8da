// The helpers of the tests that run programs/rel_endings.cc: how a process ends and what it writes
// then (endings_test.cc), at its peak (peak_test.cc) and when asked to while it runs
// (dumps_test.cc).
//
// The programs run as e2e::BackgroundProcess rather than through RunGuarded: the test reads their
// stdout while they run and writes to their stdin. Every handshake is a line: the program says
// "ready PID" (or "grown K", "handled K") and the test answers on the program's stdin, or waits for
// a profile file to appear (WaitUntil).
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "reliability_util.h"

namespace heaprec::reliability {

constexpr double kDumpWaitSeconds = 10;  // for a profile the library writes in milliseconds

using e2e::BackgroundOptions;
using e2e::BackgroundProcess;

// How the endings start a program: stdin a pipe from the test (the handshakes), RLIMIT_CORE 0
// unless `cores` (then its hard limit).
BackgroundOptions Options(const std::vector<std::string>& argv, const std::string& cwd,
                          const EnvChanges& env, bool cores = false);

// "exit 3", "signal 11 (SIGSEGV), core dumped": for messages.
std::string DescribeStatus(int wait_status);

// The wait status and output of `run`: for messages.
std::string DescribeEnding(const RunResult& run);

// stdout with the pids of "... ready PID" lines replaced: the only output that differs per run.
std::string WithoutPids(const std::string& out);

bool Contains(const std::string& text, const std::string& what);

// Waits until `done()` holds, for at most `seconds`; returns whether it did.
bool WaitUntil(const std::function<bool()>& done, double seconds = kDumpWaitSeconds);

// Profiles in `dir` (peak ones included) whose names are p.<pid>.NNNN...pb.gz: the ones a process
// writes while it runs (interval, signal, above), never the final or the peak one.
int RunningDumps(const std::string& dir, pid_t pid);

// The library's environment for a run in `dir`: exact mode unless `exact` is false.
EnvChanges PreloadEnv(const std::string& dir, bool exact = true, const EnvChanges& more = {});

// `heaprec run --top 0 FLAGS -- PROGRAM...` with its profiles in `dir`.
std::vector<std::string> UnderHeaprec(const std::string& dir,
                                      const std::vector<std::string>& program,
                                      const std::vector<std::string>& flags);

// The library writes unsymbolized profiles (heaprec run symbolizes them afterwards): names for the
// site checks.
void SymbolizeAll(const std::string& dir);

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
void ExpectTheSameEnding(const RunResult& run, const RunResult& plain);

}  // namespace heaprec::reliability
