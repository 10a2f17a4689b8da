#include "e2e_util.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
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
    if (name == "LD_PRELOAD" || name.rfind("HEAPREC_", 0) == 0 || env.count(name) != 0) continue;
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

namespace {

double MonotonicSeconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
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
  std::vector<std::string> environment = ChildEnvironment(env);
  std::vector<char*> envp;
  for (std::string& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

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
  result.status = hung ? kHung : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = ReadFile(out_path);
  result.err = ReadFile(err_path);
  if (hung) result.err += "\n[hang guard: killed after " + std::to_string(timeout_s) + " s]\n";
  unlink(out_path.c_str());
  unlink(err_path.c_str());
  return result;
}

RunResult HeaprecRun(const std::string& dir, const std::vector<std::string>& flags,
                     const std::vector<std::string>& program, const EnvChanges& env) {
  std::vector<std::string> argv = {HEAPREC_BIN, "run", "-o", dir + "/p.%p.pb.gz"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back("--");
  argv.insert(argv.end(), program.begin(), program.end());
  return RunProgram(argv, dir, env);
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

int64_t CommentValue(const Profile& profile, const std::string& name) {
  for (const std::string& comment : profile.comments) {
    if (comment.rfind(name + "=", 0) == 0) return std::stoll(comment.substr(name.size() + 1));
  }
  return -1;
}

double SampleProbability(double size, double interval) {
  return -std::expm1(-(size + 1) / interval);
}

double SampledBytesVariance(double objects, double size, double interval) {
  double p = SampleProbability(size, interval);
  return objects * size * size * (1 - p) / p;
}

}  // namespace heaprec::e2e
