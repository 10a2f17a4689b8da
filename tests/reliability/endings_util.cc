#include "endings_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstring>
#include <regex>

namespace heaprec::reliability {

BackgroundOptions Options(const std::vector<std::string>& argv, const std::string& cwd,
                          const EnvChanges& env, bool cores) {
  BackgroundOptions options;
  options.argv = argv;
  options.cwd = cwd;
  options.env = env;
  options.stdin_pipe = true;
  options.core_dumps = cores;
  options.guard_seconds = 60;  // far beyond any run here: only a deadlock reaches it
  return options;
}

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

std::string WithoutPids(const std::string& out) {
  static const std::regex kReady("(ready) [0-9]+");
  return std::regex_replace(out, kReady, "$1 PID");
}

bool Contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

bool WaitUntil(const std::function<bool()>& done, double seconds) {
  for (const double deadline = e2e::MonotonicSeconds() + seconds;
       e2e::MonotonicSeconds() < deadline; usleep(2 * 1000)) {
    if (done()) return true;
  }
  return done();
}

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

namespace {

const std::string kLib = HEAPREC_LIB;

}  // namespace

EnvChanges PreloadEnv(const std::string& dir, bool exact, const EnvChanges& more) {
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

void SymbolizeAll(const std::string& dir) {
  for (bool peak : {false, true}) {
    for (const std::string& path : e2e::ListProfiles(dir, peak)) {
      RunResult run = RunGuarded({HEAPREC_BIN, "symbolize", path}, dir);
      EXPECT_EQ(run.status, 0) << "heaprec symbolize " << path << "\n" << run.err;
    }
  }
}

void ExpectTheSameEnding(const RunResult& run, const RunResult& plain) {
  EXPECT_EQ(run.wait_status, plain.wait_status) << DescribeEnding(run);
  EXPECT_EQ(run.out, plain.out);
  EXPECT_EQ(run.err, plain.err);
}

}  // namespace heaprec::reliability
