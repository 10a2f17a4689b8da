#include "e2e_util.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pty.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

extern char** environ;

namespace heaprec::e2e {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern =
      std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/heaprec-e2e-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("mkdtemp: " + std::string(std::strerror(errno)));
  }
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

std::vector<std::string> ChildEnvironment(const EnvChanges& env) {
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    std::string name = entry.substr(0, entry.find('='));
    // DEBUGINFOD_URLS too: no test reaches a debuginfod server it did not start itself.
    if (name == "LD_PRELOAD" || name.rfind("HEAPREC_", 0) == 0 || name == "DEBUGINFOD_URLS" ||
        env.count(name) != 0) {
      continue;
    }
    environment.push_back(entry);
  }
  for (const auto& [name, value] : env) {
    if (value) environment.push_back(name + "=" + *value);
  }
  return environment;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

double MonotonicSeconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

namespace {

// The null-terminated array execve and posix_spawn take, pointing into `strings` (which they do
// not modify, whatever their prototypes say).
std::vector<char*> CStrings(const std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (const std::string& s : strings) pointers.push_back(const_cast<char*>(s.c_str()));
  pointers.push_back(nullptr);
  return pointers;
}

int StatusOf(int wait_status) {
  return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
}

// Waits for `pid`; with a timeout, kills its process group once it has passed. Returns whether it
// had to.
bool WaitForChild(pid_t pid, int timeout_s, int* status) {
  if (timeout_s <= 0) {
    while (waitpid(pid, status, 0) < 0) {
      if (errno != EINTR) throw std::runtime_error("waitpid: " + std::string(std::strerror(errno)));
    }
    return false;
  }
  const double deadline = MonotonicSeconds() + timeout_s;
  for (;;) {
    pid_t done = waitpid(pid, status, WNOHANG);
    if (done == pid) return false;
    if (done < 0 && errno != EINTR) {
      throw std::runtime_error("waitpid: " + std::string(std::strerror(errno)));
    }
    if (MonotonicSeconds() > deadline) {
      kill(-pid, SIGKILL);
      waitpid(pid, status, 0);
      return true;
    }
    usleep(20 * 1000);
  }
}

}  // namespace

RunResult RunProgram(const std::vector<std::string>& argv, const std::string& cwd,
                     const EnvChanges& env, int timeout_s) {
  const std::vector<std::string> environment = ChildEnvironment(env);
  std::vector<char*> envp = CStrings(environment), args = CStrings(argv);

  static std::atomic<int> counter{0};
  std::string stem = cwd + "/.run" + std::to_string(getpid()) + "-" + std::to_string(++counter);
  std::string out_path = stem + ".out", err_path = stem + ".err";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  // Opened after the chdir: absolute paths.
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  // Its own process group, so that the guard can kill every descendant of a hung program. Signals
  // the test process happens to block or ignore are restored to their defaults.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setpgroup(&attributes, 0);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &all);
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, args[0], &actions, &attributes, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (rc != 0) throw std::runtime_error("posix_spawn " + argv[0] + ": " + std::strerror(rc));

  int status = 0;
  bool hung = WaitForChild(pid, timeout_s, &status);
  // Whatever the program left running in its group (a hung grandchild) goes too.
  if (timeout_s > 0) kill(-pid, SIGKILL);
  RunResult result;
  result.status = hung ? kHung : StatusOf(status);
  result.wait_status = status;
  result.out = ReadFile(out_path);
  result.err = ReadFile(err_path);
  if (hung) result.err += "\n[hang guard: killed after " + std::to_string(timeout_s) + " s]\n";
  unlink(out_path.c_str());
  unlink(err_path.c_str());
  return result;
}

namespace {

// dup2 that also works when `fd` already is `target` (and clears close-on-exec either way).
// Async-signal-safe: for the child between fork and exec.
void MoveTo(int fd, int target) {
  if (fd == target) {
    fcntl(fd, F_SETFD, 0);
  } else {
    dup2(fd, target);
  }
}

// A pty with Ctrl-C generating SIGINT: sets `*master`, returns the slave side (both close-on-exec).
int OpenTerminal(int* master) {
  int slave = -1;
  if (openpty(master, &slave, nullptr, nullptr, nullptr) != 0) {
    throw std::runtime_error("openpty: " + std::string(std::strerror(errno)));
  }
  fcntl(*master, F_SETFD, FD_CLOEXEC);
  fcntl(slave, F_SETFD, FD_CLOEXEC);
  termios settings;
  tcgetattr(slave, &settings);
  settings.c_lflag |= ISIG;
  settings.c_cc[VINTR] = 3;
  tcsetattr(slave, TCSANOW, &settings);
  return slave;
}

// In the child, between fork and exec: only async-signal-safe calls. `input` is what becomes
// stdin (the pty's slave side, the pipe's read side, or -1 for /dev/null). Every descriptor opened
// here is close-on-exec until moved into place, so that none reaches the program unasked.
void SetUpChild(const BackgroundOptions& options, int input, const char* out, const char* err) {
  if (chdir(options.cwd.c_str()) != 0) _exit(126);
  if (options.terminal) {
    setsid();
    ioctl(input, TIOCSCTTY, 0);
  } else {
    setpgid(0, 0);
  }
  struct sigaction action = {};
  sigemptyset(&action.sa_mask);
  for (int s = 1; s < NSIG; ++s) {
    action.sa_handler = SIG_DFL;
    for (int ignored : options.ignored) {
      if (ignored == s) action.sa_handler = SIG_IGN;
    }
    sigaction(s, &action, nullptr);  // fails harmlessly for SIGKILL, SIGSTOP and glibc's own
  }
  sigset_t mask;
  sigemptyset(&mask);
  for (int s : options.blocked) sigaddset(&mask, s);
  sigprocmask(SIG_SETMASK, &mask, nullptr);
  rlimit core;
  getrlimit(RLIMIT_CORE, &core);
  core.rlim_cur = options.core_dumps ? core.rlim_max : 0;
  setrlimit(RLIMIT_CORE, &core);
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  int out_fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  int err_fd = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  MoveTo(input >= 0 ? input : null, 0);
  MoveTo(out_fd, 1);
  MoveTo(err_fd, 2);
  if (options.extra_descriptor) MoveTo(null, 9);
  for (int fd : options.closed) close(fd);
}

}  // namespace

BackgroundProcess::BackgroundProcess(const BackgroundOptions& options)
    : cwd_(options.cwd), guard_seconds_(options.guard_seconds) {
  // Everything the child needs is prepared here: after fork it may not allocate.
  const std::vector<std::string> environment = ChildEnvironment(options.env);
  std::vector<char*> envp = CStrings(environment), args = CStrings(options.argv);
  const std::string out = cwd_ + "/out", err = cwd_ + "/err";
  int input = -1;
  if (options.terminal) {
    input = OpenTerminal(&master_);
  } else if (options.stdin_pipe) {
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
      throw std::runtime_error("pipe2: " + std::string(std::strerror(errno)));
    }
    input = pipe_fds[0];
    stdin_ = pipe_fds[1];
  }
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork: " + std::string(std::strerror(errno)));
  if (pid_ == 0) {
    SetUpChild(options, input, out.c_str(), err.c_str());
    execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  if (input >= 0) close(input);
}

BackgroundProcess::~BackgroundProcess() {
  if (pid_ > 0) {
    kill(-pid_, SIGKILL);
    if (!reaped_) waitpid(pid_, nullptr, 0);
  }
  if (stdin_ >= 0) close(stdin_);
  if (master_ >= 0) close(master_);
}

std::string BackgroundProcess::WaitForLine(const std::string& prefix) const {
  auto find = [&] {
    std::string out = ReadFile(cwd_ + "/out");
    // Only whole lines: the program may be in the middle of writing the last one.
    out.erase(out.rfind('\n') + 1);
    for (const std::string& line : Lines(out)) {
      if (line.rfind(prefix, 0) == 0) return line;
    }
    return std::string();
  };
  for (const double deadline = MonotonicSeconds() + guard_seconds_; MonotonicSeconds() < deadline;
       usleep(2 * 1000)) {
    std::string line = find();
    if (!line.empty()) return line;
    siginfo_t info = {};
    if (waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == pid_) {
      return find();  // ended (left for Wait to reap): one last look, it may have said it just now
    }
  }
  return "";
}

pid_t BackgroundProcess::WaitUntilReady(const std::string& what) const {
  std::string line = WaitForLine(what + " ");
  return line.empty() ? -1 : static_cast<pid_t>(std::stoi(line.substr(what.size() + 1)));
}

void BackgroundProcess::Send(const std::string& line) {
  std::string text = line + "\n";
  if (write(stdin_, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    ADD_FAILURE() << "could not write to the program's stdin: " << std::strerror(errno);
  }
}

void BackgroundProcess::CloseStdin() {
  if (stdin_ >= 0) close(stdin_);
  stdin_ = -1;
}

std::string BackgroundProcess::Stderr() const { return ReadFile(cwd_ + "/err"); }

RunResult BackgroundProcess::Wait() {
  RunResult result;
  const double deadline = MonotonicSeconds() + guard_seconds_;
  pid_t done;
  while ((done = waitpid(pid_, &result.wait_status, WNOHANG)) == 0 &&
         MonotonicSeconds() < deadline) {
    usleep(2 * 1000);
  }
  if (done != pid_) {
    kill(-pid_, SIGKILL);
    waitpid(pid_, &result.wait_status, 0);
  }
  reaped_ = true;
  result.status = done != pid_ ? kHung : StatusOf(result.wait_status);
  result.out = ReadFile(cwd_ + "/out");
  result.err = ReadFile(cwd_ + "/err");
  if (result.status == kHung) result.err += "\n[hang guard: killed]\n";
  return result;
}

std::vector<std::string> HeaprecArgv(const std::string& dir, const std::vector<std::string>& flags,
                                     const std::vector<std::string>& program) {
  std::vector<std::string> argv = {HEAPREC_BIN, "run", "-o", dir + "/p.%p.pb.gz"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back("--");
  argv.insert(argv.end(), program.begin(), program.end());
  return argv;
}

RunResult HeaprecRun(const std::string& dir, const std::vector<std::string>& flags,
                     const std::vector<std::string>& program, const EnvChanges& env) {
  return RunProgram(HeaprecArgv(dir, flags, program), dir, env);
}

namespace {
bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() > suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

std::vector<std::string> ListProfiles(const std::string& dir, bool peak) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (EndsWith(name, ".pb.gz") && EndsWith(name, ".peak.pb.gz") == peak) {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::ostream& operator<<(std::ostream& out, const Values& v) {
  return out << "{alloc_objects=" << v.alloc_objects << " alloc_space=" << v.alloc_space
             << " inuse_objects=" << v.inuse_objects << " inuse_space=" << v.inuse_space << "}";
}

namespace {

bool NameMatches(const std::string& function, const std::string& site) {
  if (function.compare(0, site.size(), site) != 0) return false;
  return function.size() == site.size() || function[site.size()] == '(';
}

// Where each of the four values sits in a sample, by sample type name.
struct Indexes {
  int alloc_objects = -1, alloc_space = -1, inuse_objects = -1, inuse_space = -1;
  explicit Indexes(const Profile& p) {
    for (size_t i = 0; i < p.sample_types.size(); ++i) {
      const std::string& t = p.sample_types[i].type;
      int index = static_cast<int>(i);
      if (t == "alloc_objects") alloc_objects = index;
      if (t == "alloc_space") alloc_space = index;
      if (t == "inuse_objects") inuse_objects = index;
      if (t == "inuse_space") inuse_space = index;
    }
    if (alloc_objects < 0 || alloc_space < 0 || inuse_objects < 0 || inuse_space < 0) {
      throw std::runtime_error("profile lacks one of the four heap sample types");
    }
  }
  void Add(const Sample& s, Values* v) const {
    v->alloc_objects += s.values.at(alloc_objects);
    v->alloc_space += s.values.at(alloc_space);
    v->inuse_objects += s.values.at(inuse_objects);
    v->inuse_space += s.values.at(inuse_space);
  }
};

}  // namespace

bool StackHas(const Profile& profile, const Sample& sample, const std::string& name) {
  // Profiles are small: linear lookups keep this simple.
  for (uint64_t location_id : sample.location_ids) {
    for (const Location& location : profile.locations) {
      if (location.id != location_id) continue;
      for (const Line& line : location.lines) {
        for (const Function& function : profile.functions) {
          if (function.id == line.function_id && NameMatches(function.name, name)) return true;
        }
      }
    }
  }
  return false;
}

Values SiteValues(const Profile& profile, const std::string& site) {
  Indexes indexes(profile);
  Values v;
  for (const Sample& s : profile.samples) {
    if (StackHas(profile, s, site)) indexes.Add(s, &v);
  }
  return v;
}

Values TotalValues(const Profile& profile) {
  Indexes indexes(profile);
  Values v;
  for (const Sample& s : profile.samples) indexes.Add(s, &v);
  return v;
}

std::vector<ObjectGroup> OtherLiveGroups(const Profile& profile,
                                         const std::vector<std::string>& sites) {
  Indexes indexes(profile);
  std::vector<ObjectGroup> groups;
  for (const Sample& s : profile.samples) {
    bool at_site = std::any_of(sites.begin(), sites.end(),
                               [&](const std::string& site) { return StackHas(profile, s, site); });
    if (at_site || s.values.at(indexes.inuse_objects) == 0) continue;
    ObjectGroup group;
    group.objects = s.values.at(indexes.inuse_objects);
    for (const Label& label : s.labels) {
      if (label.key == "bytes") group.size = label.num;
    }
    groups.push_back(group);
  }
  return groups;
}

std::vector<std::string> CommentValues(const Profile& profile, const std::string& name) {
  std::vector<std::string> values;
  for (const std::string& comment : profile.comments) {
    std::istringstream fields(comment);
    std::string field;
    while (fields >> field) {
      if (field.rfind(name + "=", 0) == 0) values.push_back(field.substr(name.size() + 1));
    }
  }
  return values;
}

std::string CommentText(const Profile& profile, const std::string& name) {
  std::vector<std::string> values = CommentValues(profile, name);
  return values.empty() ? "" : values[0];
}

int64_t CommentValue(const Profile& profile, const std::string& name) {
  std::string value = CommentText(profile, name);
  return value.empty() ? -1 : std::stoll(value);
}

double SampleProbability(double size, double interval) {
  return -std::expm1(-(size + 1) / interval);
}

double SampledBytesVariance(double objects, double size, double interval) {
  double p = SampleProbability(size, interval);
  return objects * size * size * (1 - p) / p;
}

std::vector<ReportRow> ReportRows(const std::string& report) {
  static const std::regex row(
      R"(^ *[0-9.]+ [A-Za-z]+ +[0-9.]+% +[0-9.]+% +[0-9.]+ [A-Za-z]+ +[0-9.]+% +(.+?)(?: ([^ ]+):([0-9]+))?$)");
  std::vector<ReportRow> rows;
  for (const std::string& text : Lines(report)) {
    std::smatch match;
    if (!std::regex_match(text, match, row)) continue;
    rows.push_back({match[1], match[2], match[3].matched ? std::stoi(match[3]) : 0});
  }
  return rows;
}

int MarkedLine(const std::string& source, const std::string& marker) {
  std::ifstream in(source);
  std::string text;
  for (int number = 1; std::getline(in, text); ++number) {
    if (text.ends_with(marker)) return number;
  }
  return 0;
}

}  // namespace heaprec::e2e
