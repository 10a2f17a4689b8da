// `heaprec run`: runs a program with the preload library (or, with --ruby, with the Ruby gem's
// autorun file), waits for it, then symbolizes the profiles every process wrote and prints the top
// allocation sites of the program's final profile.
//
// The CLI passes its settings to the profiler through the environment (HEAPREC_*, see
// run_environment.h), exactly as a user profiling a service under a supervisor would, so both paths
// are the same code. The profiler reports each file it writes in a manifest (HEAPREC_MANIFEST),
// which is how files from forked and exec'd descendants are found. Everything heaprec prints goes
// to stderr: the program's stdout is left exactly as it would be without the profiler.
//
// The program must not be able to tell heaprec from the shell that would otherwise have started
// it: it gets heaprec's own signal dispositions and mask as heaprec found them, and exactly the
// descriptors heaprec inherited (everything heaprec opens itself is close-on-exec).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"
#include "cli/run_environment.h"
#include "preload/settings.h"
#include "profile/pprof_reader.h"
#include "render/format.h"
#include "render/output_file.h"
#include "render/top_table.h"
#include "schema/manifest.h"
#include "schema/profile_schema.h"
#include "symbolize/symbolizer.h"

namespace heaprec::cli {
namespace {

using profile::Location;
using profile::Profile;
using profile::Sample;

struct ManifestEntry {
  pid_t pid;
  std::string reason;
  std::string path;
};

// The program, once it exists: where the signal forwarder sends what heaprec receives.
std::atomic<pid_t> g_child{0};
static_assert(std::atomic<pid_t>::is_always_lock_free, "read by a signal handler");

// The program's command line, split off before CLI11 parses heaprec's own options (see
// SplitRunCommandLine): handed to the program exactly as given.
std::vector<std::string> g_program_arguments;

// `heaprec run` options that take a value, so that the value is not mistaken for the program.
bool TakesValue(std::string_view option) {
  for (std::string_view known :
       {"--sample-interval", "--sample-every", "-o", "--output", "--dump-interval", "--dump-signal",
        "--max-depth", "--unwind", "--seed", "--top", "--dump-above"}) {
    if (option == known) return true;
  }
  return false;
}

// The signals heaprec catches while the program runs, to pass them on: everything a user or a
// supervisor sends to stop, hang up or poke a process.
constexpr int kForwardedSignals[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};
constexpr size_t kForwardedCount = sizeof(kForwardedSignals) / sizeof(kForwardedSignals[0]);

// heaprec's signal state as it found it: the program gets it back between fork and exec, so that it
// starts with the mask and dispositions it would have had without heaprec (a signal that heaprec's
// own parent ignored stays ignored, as with nohup).
struct SignalState {
  sigset_t mask;
  struct sigaction actions[kForwardedCount];
  struct sigaction child_action;  // SIGCHLD's
};

// A terminal's interrupt, quit and hangup (si_code SI_KERNEL) go to its whole foreground process
// group, which holds the program too: passing them on would deliver them twice. Anything sent with
// kill or sigqueue was meant for heaprec alone, standing in for the program, so the program gets
// it. This is what sudo does.
void ForwardSignal(int signal_number, siginfo_t* info, void*) {
  if (info->si_code == SI_KERNEL) return;
  int saved_errno = errno;
  pid_t child = g_child.load(std::memory_order_relaxed);
  if (child > 0) kill(child, signal_number);
  errno = saved_errno;
}

// Saves the signal state, then blocks the forwarded signals and installs the forwarder for each
// one not ignored on entry. They stay blocked until the program exists (UnblockForwardedSignals):
// one arriving before that is kept pending rather than lost, then forwarded.
void CatchForwardedSignals(SignalState* saved) {
  sigset_t forwarded;
  sigemptyset(&forwarded);
  for (int s : kForwardedSignals) sigaddset(&forwarded, s);
  sigprocmask(SIG_BLOCK, &forwarded, &saved->mask);
  struct sigaction forward = {};
  forward.sa_sigaction = ForwardSignal;
  forward.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&forward.sa_mask);
  for (size_t i = 0; i < kForwardedCount; ++i) {
    sigaction(kForwardedSignals[i], nullptr, &saved->actions[i]);
    if (saved->actions[i].sa_handler != SIG_IGN) sigaction(kForwardedSignals[i], &forward, nullptr);
  }
  // With SIGCHLD ignored (or SA_NOCLDWAIT), children are reaped unseen and waitpid fails: heaprec
  // could not learn the program's status. The program gets the ignored SIGCHLD back.
  struct sigaction child_default = {};
  child_default.sa_handler = SIG_DFL;
  sigemptyset(&child_default.sa_mask);
  sigaction(SIGCHLD, &child_default, &saved->child_action);
}

void UnblockForwardedSignals(const SignalState& saved) {
  sigprocmask(SIG_SETMASK, &saved.mask, nullptr);
}

// Puts back the state CatchForwardedSignals saved: in the child before exec, and in heaprec once
// the program is gone (Ctrl-C while heaprec symbolizes then stops heaprec, as it would any
// command). Dispositions first, so that no signal unblocked by the mask meets the forwarder.
// Async-signal-safe: it runs between fork and exec.
void RestoreSignals(const SignalState& saved) {
  for (size_t i = 0; i < kForwardedCount; ++i) {
    sigaction(kForwardedSignals[i], &saved.actions[i], nullptr);
  }
  sigaction(SIGCHLD, &saved.child_action, nullptr);
  sigprocmask(SIG_SETMASK, &saved.mask, nullptr);
}

// Occupies each of descriptors 0, 1 and 2 that heaprec was started without with /dev/null,
// close-on-exec. Otherwise the next file heaprec opens (the status pipe, a profile) would take that
// number, and heaprec's messages to stderr would land in it; exec closes the placeholders, so the
// program still starts with them closed, as it would without heaprec.
void ReserveStandardDescriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
    int placeholder = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (placeholder >= 0 && placeholder != fd) {
      dup3(placeholder, fd, O_CLOEXEC);
      close(placeholder);
    }
  }
}

// The preload library sits next to the CLI in the build tree and in an installed prefix:
// <prefix>/bin/heaprec and <prefix>/lib/libheaprec.so. HEAPREC_LIBRARY overrides.
std::string FindPreloadLibrary() {
  if (const char* explicit_path = std::getenv("HEAPREC_LIBRARY")) return explicit_path;
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  for (const char* relative : {"../lib/libheaprec.so", "libheaprec.so"}) {
    std::filesystem::path candidate = self.parent_path() / relative;
    if (std::filesystem::exists(candidate, ec))
      return std::filesystem::canonical(candidate, ec).string();
  }
  return {};
}

// Checks the flags with the parsers the preload library uses, so a bad value fails here with a
// usage error instead of a disabled profiler.
bool ValidateOptions(const RunOptions& o) {
  std::uint64_t u64 = 0;
  int signal_number = 0;
  auto fail = [](const std::string& flag, const std::string& value, const char* expected) {
    std::cerr << "heaprec run: " << flag << " '" << value << "' is invalid: expected " << expected
              << "\n";
    return false;
  };
  if (std::string mode_error = CheckRunMode(o); !mode_error.empty()) {
    std::cerr << "heaprec run: " << mode_error << "\n";
    return false;
  }
  if (!o.sample_interval.empty() && !preload::ParseByteCount(o.sample_interval.c_str(), &u64)) {
    return fail("--sample-interval", o.sample_interval,
                "a byte count such as 524288, 512K or 2M (1 = exact)");
  }
  // The profile's period is an int64; anything near that bound samples nothing anyway.
  if (!o.sample_every.empty() &&
      (!preload::ParseSeed(o.sample_every.c_str(), &u64) || u64 == 0 ||
       u64 > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))) {
    return fail("--sample-every", o.sample_every,
                "a number of objects such as 1000 (1 = every object)");
  }
  if (!o.dump_interval.empty() && !preload::ParseSeconds(o.dump_interval.c_str(), &u64)) {
    return fail("--dump-interval", o.dump_interval, "seconds such as 10 or 0.5");
  }
  if (!o.dump_signal.empty() && !preload::ParseSignal(o.dump_signal.c_str(), &signal_number)) {
    return fail("--dump-signal", o.dump_signal,
                "a signal name such as SIGUSR2, USR1, HUP, or its number");
  }
  std::uint32_t depth = 0;
  if (!o.max_depth.empty() && !preload::ParseMaxDepth(o.max_depth.c_str(), &depth)) {
    return fail("--max-depth", o.max_depth, "a frame count from 1 to 1024");
  }
  if (!o.seed.empty() && !preload::ParseSeed(o.seed.c_str(), &u64)) {
    return fail("--seed", o.seed, "an unsigned integer");
  }
  // "libunwind": the DWARF unwinder's name when heaprec used libunwind for it.
  if (!o.unwind.empty() && o.unwind != "dwarf" && o.unwind != "libunwind" && o.unwind != "libgcc" &&
      o.unwind != "check" && o.unwind != "fp") {
    return fail("--unwind", o.unwind, "dwarf, libgcc, check or fp");
  }
  if (!o.dump_above.empty() && !preload::ParseByteCount(o.dump_above.c_str(), &u64)) {
    return fail("--dump-above", o.dump_above, "a byte count such as 100M or 2G");
  }
  if (o.output.empty() || o.output.size() >= PATH_MAX) {
    return fail("-o", o.output, "a non-empty path template");
  }
  // The library checks this too, but here heaprec can stop before the program runs for nothing.
  std::filesystem::path directory = std::filesystem::absolute(o.output).parent_path();
  if (directory.string().find('%') == std::string::npos &&
      access(directory.c_str(), W_OK | X_OK) != 0) {
    std::cerr << "heaprec run: -o '" << o.output << "' is invalid: directory '"
              << directory.string() << "' is not writable (" << std::strerror(errno) << ")\n";
    return false;
  }
  return true;
}

// The directory holding the Ruby gem's heaprec/autorun.rb, or "" after saying why there is none.
std::string FindRubyLibrary() {
  const char* override_directory = std::getenv("HEAPREC_RUBY_LIB");
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  std::string directory = RubyLibraryDirectory(self.string(), override_directory);
  if (HasRubyAutorun(directory)) return directory;
  std::cerr << "heaprec run: --ruby: no heaprec/autorun.rb in '" << directory << "'"
            << (override_directory != nullptr && *override_directory != '\0'
                    ? " (from HEAPREC_RUBY_LIB)"
                    : "; set HEAPREC_RUBY_LIB to the directory that holds heaprec/autorun.rb")
            << "\n";
  return {};
}

void SetEnvironment(const RunOptions& o, const std::string& library, const std::string& manifest) {
  for (const auto& [name, value] : RunEnvironment(o, library, manifest, std::getenv)) {
    setenv(name.c_str(), value.c_str(), 1);
  }
}

// Starts the program; returns its pid, or -1 if fork failed. The child reports an exec failure
// through a close-on-exec pipe, which closes silently on success. Between fork and exec the child
// only restores what heaprec changed: its signal state and (with --no-follow) one variable.
pid_t StartProgram(const RunOptions& o, const SignalState& signals, int* exec_errno) {
  std::vector<char*> argv;
  for (const std::string& arg : o.command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  int status_pipe[2];
  if (pipe2(status_pipe, O_CLOEXEC) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    close(status_pipe[0]);
    RestoreSignals(signals);
    if (o.no_follow) setenv("HEAPREC_NO_FOLLOW", std::to_string(getpid()).c_str(), 1);
    execvp(argv[0], argv.data());
    int error = errno;
    ssize_t ignored = write(status_pipe[1], &error, sizeof(error));
    (void)ignored;
    _exit(127);
  }
  int fork_errno = errno;
  close(status_pipe[1]);
  if (pid < 0) {
    close(status_pipe[0]);
    errno = fork_errno;
    return -1;
  }
  g_child.store(pid, std::memory_order_relaxed);
  *exec_errno = 0;
  ssize_t n;
  do {
    n = read(status_pipe[0], exec_errno, sizeof(*exec_errno));
  } while (n < 0 && errno == EINTR);
  close(status_pipe[0]);
  return pid;
}

// The signal's abbreviation with its prefix, "SIGSEGV", or its number for one glibc cannot name
// (a real-time signal).
std::string SignalName(int signal_number) {
  const char* abbreviation = sigabbrev_np(signal_number);
  return abbreviation != nullptr ? std::string("SIG") + abbreviation
                                 : "signal " + std::to_string(signal_number);
}

// How the program ended, in one line for the user, from its wait status.
std::string DescribeEnding(int status) {
  if (WIFEXITED(status)) {
    return "the program exited with status " + std::to_string(WEXITSTATUS(status));
  }
  int signal_number = WTERMSIG(status);
  return "the program was killed by signal " + std::to_string(signal_number) + " (" +
         SignalName(signal_number) + ")" + (WCOREDUMP(status) ? ", core dumped" : "");
}

// Waits for the program, says how it ended and returns heaprec's exit status: the program's, or
// 128+N when signal N killed it, as a shell reports it.
int WaitForProgram(pid_t pid) {
  // First wait without reaping: while the program is a zombie its pid cannot be given to another
  // process, so the forwarder can be stopped before it could signal a stranger.
  siginfo_t ended;
  while (waitid(P_PID, static_cast<id_t>(pid), &ended, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
  g_child.store(0, std::memory_order_relaxed);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      std::cerr << "heaprec: cannot wait for the program: " << std::strerror(errno) << "\n";
      return 1;
    }
  }
  std::cerr << "heaprec: " << DescribeEnding(status) << "\n";
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// What the processes reported in the manifest: each profile file once, and the messages the
// library could not print because the program had redirected its stderr.
struct Manifest {
  std::vector<ManifestEntry> profiles;  // in the order first written
  std::vector<std::string> messages;
};

// Adds a profile, or updates the entry of a path listed before: a peak profile is rewritten each
// time the peak grows, and the file holds what was written last.
void AddProfile(std::vector<ManifestEntry>* profiles, ManifestEntry entry) {
  for (ManifestEntry& listed : *profiles) {
    if (listed.path == entry.path) {
      listed = std::move(entry);
      return;
    }
  }
  profiles->push_back(std::move(entry));
}

// Reads "pid<TAB>reason<TAB>path" lines; for reason "message" the third field is the text.
Manifest ReadManifest(const std::string& path) {
  Manifest manifest;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    ManifestEntry e;
    std::string pid;
    if (!std::getline(fields, pid, schema::kManifestSeparator) ||
        !std::getline(fields, e.reason, schema::kManifestSeparator) ||
        !std::getline(fields, e.path)) {
      continue;
    }
    e.pid = static_cast<pid_t>(std::atoi(pid.c_str()));
    if (e.reason == schema::kManifestMessage) {
      manifest.messages.push_back(std::move(e.path));
    } else {
      AddProfile(&manifest.profiles, std::move(e));
    }
  }
  return manifest;
}

// Creates the empty manifest the processes append to; "" after saying why it could not. Closed at
// once (and close-on-exec meanwhile): the program must not inherit it.
std::string CreateManifest() {
  std::string manifest =
      (std::filesystem::temp_directory_path() / "heaprec-manifest-XXXXXX").string();
  int fd = mkostemp(manifest.data(), O_CLOEXEC);
  if (fd < 0) {
    std::cerr << "heaprec run: cannot create a temporary file: " << std::strerror(errno) << "\n";
    return "";
  }
  close(fd);
  return manifest;
}

// Whether some location still has only an address. Ruby profiles never do: their frames are written
// with names, files and lines, and no mappings to symbolize from.
bool NeedsSymbolization(const Profile& profile) {
  for (const Location& location : profile.locations) {
    if (location.lines.empty()) return true;
  }
  return false;
}

// Symbolizes every profile that needs it, in place, with one Symbolizer: the processes of a run
// share most of their binaries. Returns false if any could not be processed.
bool SymbolizeProfiles(const std::vector<ManifestEntry>& entries) {
  bool ok = true;
  symbolize::Symbolizer symbolizer(symbolize::CommandLineSymbolizeOptions());
  for (const ManifestEntry& e : entries) {
    try {
      Profile profile = profile::ReadProfileFile(e.path);
      if (!NeedsSymbolization(profile)) continue;  // nothing to add: leave the file as written
      symbolizer.Symbolize(profile);
      render::WriteProfileFile(profile, e.path);
    } catch (const std::exception& error) {
      std::cerr << "heaprec: " << error.what() << "\n";
      ok = false;
    }
  }
  return ok;
}

// How a process ended, for each reason the library gives its final profile; nullptr for the other
// reasons (interval, signal, api, peak, above), which a process writes while it runs.
const char* EndingOf(const std::string& reason) {
  if (reason == schema::kReasonExit) return "ended with exit() or a return from main";
  if (reason == schema::kReasonUnderscoreExit) return "ended with _exit()";
  if (reason == schema::kReasonCrash) return "crashed on a fatal signal";
  if (reason == schema::kReasonTerminated) return "was killed by a termination signal";
  return nullptr;
}

// The library's messages, each as a heaprec line.
void PrintMessages(const std::vector<std::string>& messages) {
  for (const std::string& message : messages) {
    std::cerr << (message.rfind("heaprec:", 0) == 0 ? "" : "heaprec: ") << message << "\n";
  }
}

// Up to this many profiles are listed one per line; beyond it (a build, a shell script: hundreds
// of processes) the program's own are listed and the rest summed up.
constexpr size_t kListedProfiles = 20;

void PrintProfileLine(const ManifestEntry& e) {
  std::cerr << "  " << e.path << "  (pid " << e.pid << ", " << e.reason;
  if (const char* ending = EndingOf(e.reason)) std::cerr << ": the process " << ending;
  std::cerr << ")\n";
}

// The profiles not listed, in one line: how many, from how many processes, by reason, and where.
void PrintProfileTally(const std::vector<ManifestEntry>& rest) {
  std::map<std::string, size_t> by_reason;
  std::set<pid_t> processes;
  std::set<std::string> directories;
  for (const ManifestEntry& e : rest) {
    ++by_reason[e.reason];
    processes.insert(e.pid);
    directories.insert(std::filesystem::path(e.path).parent_path().string());
  }
  std::cerr << "  and " << rest.size() << " more from " << processes.size()
            << (processes.size() == 1 ? " other process" : " other processes") << " (";
  const char* separator = "";
  for (const auto& [reason, count] : by_reason) {
    std::cerr << separator << count << " " << reason;
    separator = ", ";
  }
  std::cerr << ") in ";
  separator = "";
  for (const std::string& directory : directories) {
    std::cerr << separator << directory;
    separator = ", ";
  }
  std::cerr << "\n";
}

void PrintProfileList(const std::vector<ManifestEntry>& profiles, pid_t root) {
  std::cerr << "heaprec: wrote " << profiles.size()
            << (profiles.size() == 1 ? " profile" : " profiles") << ":\n";
  if (profiles.size() <= kListedProfiles) {
    for (const ManifestEntry& e : profiles) PrintProfileLine(e);
    return;
  }
  std::vector<ManifestEntry> rest;
  for (const ManifestEntry& e : profiles) {
    if (e.pid == root) {
      PrintProfileLine(e);
    } else {
      rest.push_back(e);
    }
  }
  PrintProfileTally(rest);
}

// The last profile of `pid` that `matches` the reason, or nullptr.
template <typename Predicate>
const ManifestEntry* LastProfileOf(const std::vector<ManifestEntry>& profiles, pid_t pid,
                                   Predicate matches) {
  const ManifestEntry* found = nullptr;
  for (const ManifestEntry& e : profiles) {
    if (e.pid == pid && matches(e.reason)) found = &e;
  }
  return found;
}

const ManifestEntry* FinalProfileOf(const std::vector<ManifestEntry>& profiles, pid_t pid) {
  return LastProfileOf(profiles, pid,
                       [](const std::string& reason) { return EndingOf(reason) != nullptr; });
}

// The live bytes a profile holds (its inuse_space, summed), or -1 if it has no such values.
std::int64_t InuseSpace(const Profile& profile) {
  for (size_t i = 0; i < profile.sample_types.size(); ++i) {
    if (profile.sample_types[i].type != schema::kInuseSpace) continue;
    std::int64_t total = 0;
    for (const Sample& sample : profile.samples) total += sample.values.at(i);
    return total;
  }
  return -1;
}

// A process that freed (nearly) everything before it ended leaves a final profile with little to
// show; what it held at its peak is in its peak profile, so say where to look.
void PointAtPeakProfile(const std::vector<ManifestEntry>& profiles,
                        const ManifestEntry& final_profile) {
  const ManifestEntry* peak = LastProfileOf(
      profiles, final_profile.pid, [](const std::string& reason) { return reason == schema::kReasonPeak; });
  if (peak == nullptr) return;
  try {
    std::int64_t final_bytes = InuseSpace(profile::ReadProfileFile(final_profile.path));
    std::int64_t peak_bytes = InuseSpace(profile::ReadProfileFile(peak->path));
    if (final_bytes < 0 || peak_bytes <= 0 || final_bytes * 10 >= peak_bytes) return;
    std::cerr << "heaprec: the final profile of pid " << final_profile.pid << " holds "
              << render::FormatValue(final_bytes, schema::kBytesUnit) << "; its peak profile " << peak->path
              << " holds " << render::FormatValue(peak_bytes, schema::kBytesUnit) << "\n";
  } catch (const std::exception& error) {
    std::cerr << "heaprec: " << error.what() << "\n";
  }
}

// The top sites of the program's own final profile.
void PrintTopSites(const RunOptions& o, const ManifestEntry& final_profile) {
  if (o.top == 0) return;
  try {
    Profile profile = profile::ReadProfileFile(final_profile.path);
    render::ReportOptions report;
    report.source = final_profile.path;
    report.sample_index = schema::kInuseSpace;
    report.top = o.top;
    std::cerr << "\n";
    render::PrintReport(profile, report, std::cerr);
  } catch (const std::exception& error) {
    std::cerr << "heaprec: " << error.what() << "\n";
  }
}

// `unprofiled`: heaprec already said why no profile could be written (a static executable).
void PrintSummary(const RunOptions& o, pid_t root, const Manifest& manifest, bool unprofiled) {
  PrintMessages(manifest.messages);
  const std::vector<ManifestEntry>& profiles = manifest.profiles;
  if (profiles.empty()) {
    // Profiles are written at exit, _exit, abort and fatal or terminating signals, and the peak
    // one as it grows: these are what is left.
    if (!unprofiled) {
      std::cerr << "heaprec: no profile was written (was the program killed by SIGKILL before its "
                   "first peak profile, statically linked, or run with profiling turned off?)\n";
    }
    return;
  }
  PrintProfileList(profiles, root);
  // Reading every process's final and peak profiles would cost seconds in a build: with many
  // profiles, only the program's own get the pointer.
  for (const ManifestEntry& e : profiles) {
    bool listed = profiles.size() <= kListedProfiles || e.pid == root;
    if (listed && EndingOf(e.reason) != nullptr) PointAtPeakProfile(profiles, e);
  }
  if (const ManifestEntry* final_profile = FinalProfileOf(profiles, root))
    PrintTopSites(o, *final_profile);
}

// Says so when the program is a static executable, which LD_PRELOAD cannot reach; it still runs,
// unprofiled. Ruby programs are reached through RUBYOPT instead, whatever the interpreter's
// linking.
bool WarnIfStatic(const RunOptions& o) {
  if (o.ruby) return false;
  std::string file = FindProgram(o.command[0], std::getenv("PATH"));
  if (file.empty() || !IsStaticExecutable(file)) return false;
  std::cerr << "heaprec: " << o.command[0]
            << " is statically linked; LD_PRELOAD cannot reach it, so it will run unprofiled\n";
  return true;
}

// Runs the program with the signals forwarded; returns heaprec's exit status. `pid` is the
// program's, or -1 if it could not be started.
int RunProgram(const RunOptions& o, pid_t* pid) {
  SignalState signals;
  CatchForwardedSignals(&signals);
  int exec_errno = 0;
  *pid = StartProgram(o, signals, &exec_errno);
  if (*pid < 0) {
    int fork_errno = errno;
    RestoreSignals(signals);
    std::cerr << "heaprec run: cannot start a process: " << std::strerror(fork_errno) << "\n";
    return kExitFailure;
  }
  UnblockForwardedSignals(signals);  // anything that arrived meanwhile is forwarded now
  if (exec_errno != 0) {
    g_child.store(0, std::memory_order_relaxed);  // before its pid is free for another process
    waitpid(*pid, nullptr, 0);
    *pid = -1;  // no program ran: nothing to report
    RestoreSignals(signals);
    std::cerr << "heaprec run: cannot run '" << o.command[0] << "': " << std::strerror(exec_errno)
              << "\n";
    return exec_errno == ENOENT ? 127 : 126;
  }
  int status = WaitForProgram(*pid);
  RestoreSignals(signals);
  return status;
}

int Run(const RunOptions& o) {
  ReserveStandardDescriptors();
  if (o.command.empty()) {
    std::cerr
        << "heaprec run: no program given (usage: heaprec run [OPTIONS] -- PROGRAM [ARGS...])\n";
    return kExitUsage;
  }
  if (!ValidateOptions(o)) return kExitUsage;
  std::string library = o.ruby ? FindRubyLibrary() : FindPreloadLibrary();
  if (library.empty()) {
    if (!o.ruby) {
      std::cerr << "heaprec run: cannot find libheaprec.so next to the heaprec binary; set "
                   "HEAPREC_LIBRARY\n";
    }
    return kExitFailure;
  }
  bool unprofiled = WarnIfStatic(o);
  std::string manifest = CreateManifest();
  if (manifest.empty()) return kExitFailure;
  SetEnvironment(o, library, manifest);
  pid_t pid = -1;
  int status = RunProgram(o, &pid);
  Manifest written = ReadManifest(manifest);
  unlink(manifest.c_str());
  if (pid < 0) return status;
  if (o.symbolize) SymbolizeProfiles(written.profiles);
  PrintSummary(o, pid, written, unprofiled);
  return status;
}

}  // namespace

int SplitRunCommandLine(int argc, char** argv) {
  if (argc < 2 || std::string_view(argv[1]) != "run") return argc;
  for (int i = 2; i < argc; ++i) {
    std::string_view arg = argv[i];
    int program_start = -1, options_end = i;
    if (arg == "--") {
      program_start = i + 1;
    } else if (arg.empty() || arg[0] != '-') {
      program_start = i;
    } else if (arg.find('=') == std::string_view::npos && TakesValue(arg)) {
      ++i;  // its value, whatever it looks like
    }
    if (program_start >= 0) {
      g_program_arguments.assign(argv + program_start, argv + argc);
      return options_end;
    }
  }
  return argc;
}

void RegisterRunCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<RunOptions>();
  options->output = preload::kDefaultOutputTemplate;
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Run a program under the live-heap profiler: heaprec run [OPTIONS] [--] PROGRAM [ARGS...]");
  cmd->footer(
      "Native programs: libheaprec.so is preloaded (LD_PRELOAD). Every option has an environment\n"
      "twin it reads (e.g. --sample-interval is HEAPREC_SAMPLE_INTERVAL).\n"
      "Ruby programs: heaprec run --ruby [--sample-every N] -- ruby app.rb ARGS\n"
      "(or -- bundle exec ...). Nothing is preloaded: heaprec prepends its Ruby library to\n"
      "RUBYLIB and -rheaprec/autorun to RUBYOPT, so every Ruby process of the program profiles\n"
      "its live objects. The library is lib/ruby beside heaprec's lib/ directory;\n"
      "HEAPREC_RUBY_LIB overrides it. --sample-every is HEAPREC_SAMPLE_EVERY.\n"
      "--sample-interval, --unwind, --dump-signal, --dump-above, --quiet and --no-follow are for\n"
      "native programs only.\n"
      "Output templates expand %p (pid), %t (time), %e (program name).\n"
      "Signals: a terminal's Ctrl-C, Ctrl-\\ and hangup reach the program directly; INT, QUIT,\n"
      "TERM, HUP, USR1 and USR2 sent to heaprec with kill are passed on to it.\n"
      "A statically linked program runs unprofiled: LD_PRELOAD cannot reach it.\n"
      "Exit status: the program's own (128+N if it was killed by signal N).");
  cmd->add_flag("--ruby", options->ruby,
                "Profile Ruby objects (through RUBYOPT=-rheaprec/autorun) instead of native "
                "allocations");
  cmd->add_option("--sample-interval", options->sample_interval,
                  "Native: mean bytes between samples (default 512K; 1 = record every allocation "
                  "exactly)");
  cmd->add_option("--sample-every", options->sample_every,
                  "Ruby (--ruby): sample 1 in N objects on average, each counting N (default "
                  "1000; 1 = every object, exact)");
  cmd->add_option("-o,--output", options->output, "Profile path template")
      ->default_str(preload::kDefaultOutputTemplate);
  cmd->add_option("--dump-interval", options->dump_interval, "Also write a profile every SECONDS");
  cmd->add_option("--dump-signal", options->dump_signal,
                  "Native: also write a profile on this signal (e.g. SIGUSR2)");
  cmd->add_option("--max-depth", options->max_depth,
                  "Frames kept per stack, 1-1024 (default 128; Ruby 400)");
  cmd->add_option("--dump-above", options->dump_above,
                  "Native: also write a profile each time the live heap crosses another BYTES "
                  "(BYTES, 2x, 3x, ...)");
  cmd->add_flag("--quiet", options->quiet,
                "Native: no line on stderr for each profile written on --dump-signal");
  cmd->add_option(
      "--unwind", options->unwind,
      "Native: stack unwinder, dwarf (default; heaprec's own, cached per return address), libgcc "
      "(libgcc's, uncached), check (libgcc's, compared with dwarf's on every sample) "
      "or fp (frame pointers)");
  cmd->add_option("--seed", options->seed, "Fixed sampler seed, for reproducible runs");
  cmd->add_flag("--no-follow", options->no_follow,
                "Native: do not profile programs the program executes");
  cmd->add_flag("!--no-symbolize", options->symbolize, "Leave the profiles unsymbolized");
  cmd->add_option("--top", options->top, "Sites to print at the end (0 = none)")->default_val(10);
  cmd->callback([options, exit_code] {
    options->command = g_program_arguments;
    *exit_code = Run(*options);
  });
}

}  // namespace heaprec::cli
