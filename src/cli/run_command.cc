// `heaprec run`: runs a program with the preload library (or, with --ruby, with the Ruby gem's
// autorun file), waits for it, then symbolizes the profiles every process wrote and prints the top
// allocation sites of the program's final profile.
//
// The CLI passes its settings to the profiler through the environment (HEAPREC_*, see
// run_environment.h), exactly as a user profiling a service under a supervisor would, so both paths
// are the same code. The profiler reports each file it writes in a manifest (HEAPREC_MANIFEST),
// which is how files from forked and exec'd descendants are found. Everything heaprec prints goes
// to stderr: the program's stdout is left exactly as it would be without the profiler.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"
#include "cli/report.h"
#include "cli/run_environment.h"
#include "preload/settings.h"
#include "profile/pprof_reader.h"
#include "profile/pprof_writer.h"
#include "symbolize/symbolizer.h"

namespace heaprec::cli {
namespace {

struct ManifestEntry {
  pid_t pid;
  std::string reason;
  std::string path;
};

pid_t g_child = 0;

// The program's command line, split off before CLI11 parses heaprec's own options (see
// SplitRunCommandLine): handed to the program exactly as given.
std::vector<std::string> g_program_arguments;

// `heaprec run` options that take a value, so that the value is not mistaken for the program.
bool TakesValue(std::string_view option) {
  for (std::string_view known :
       {"--sample-interval", "--sample-every", "-o", "--output", "--dump-interval", "--dump-signal",
        "--max-depth", "--unwind", "--seed", "--top"}) {
    if (option == known) return true;
  }
  return false;
}

void ForwardSignal(int signal_number) {
  if (g_child > 0) kill(g_child, signal_number);
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
  if (!o.unwind.empty() && o.unwind != "libunwind" && o.unwind != "fp") {
    return fail("--unwind", o.unwind, "libunwind or fp");
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

// Starts the program; returns its pid, or -1 after printing why it could not be started. The child
// reports an exec failure through a close-on-exec pipe, which closes silently on success.
pid_t StartProgram(const RunOptions& o, int* exec_errno) {
  int status_pipe[2];
  if (pipe2(status_pipe, O_CLOEXEC) != 0) return -1;
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    close(status_pipe[0]);
    if (o.no_follow) setenv("HEAPREC_NO_FOLLOW", std::to_string(getpid()).c_str(), 1);
    std::vector<char*> argv;
    for (const std::string& arg : o.command) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    int error = errno;
    ssize_t ignored = write(status_pipe[1], &error, sizeof(error));
    (void)ignored;
    _exit(127);
  }
  close(status_pipe[1]);
  *exec_errno = 0;
  ssize_t n;
  do {
    n = read(status_pipe[0], exec_errno, sizeof(*exec_errno));
  } while (n < 0 && errno == EINTR);
  close(status_pipe[0]);
  return pid;
}

int WaitForProgram(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return 1;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    std::cerr << "heaprec: "
              << "the program was killed by signal " << WTERMSIG(status) << " ("
              << strsignal(WTERMSIG(status)) << ")\n";
    return 128 + WTERMSIG(status);
  }
  return 1;
}

std::vector<ManifestEntry> ReadManifest(const std::string& path) {
  std::vector<ManifestEntry> entries;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    ManifestEntry e;
    std::string pid;
    if (std::getline(fields, pid, '\t') && std::getline(fields, e.reason, '\t') &&
        std::getline(fields, e.path)) {
      e.pid = static_cast<pid_t>(std::atoi(pid.c_str()));
      entries.push_back(std::move(e));
    }
  }
  return entries;
}

// Whether some location still has only an address. Ruby profiles never do: their frames are written
// with names, files and lines, and no mappings to symbolize from.
bool NeedsSymbolization(const Profile& profile) {
  for (const Location& location : profile.locations) {
    if (location.lines.empty()) return true;
  }
  return false;
}

// Symbolizes every profile that needs it, in place. Returns false if any could not be processed.
bool SymbolizeProfiles(const std::vector<ManifestEntry>& entries) {
  bool ok = true;
  for (const ManifestEntry& e : entries) {
    try {
      Profile profile = ReadProfileFile(e.path);
      if (!NeedsSymbolization(profile)) continue;  // nothing to add: leave the file as written
      Symbolize(profile);
      WriteProfileFile(profile, e.path);
    } catch (const std::exception& error) {
      std::cerr << "heaprec: " << error.what() << "\n";
      ok = false;
    }
  }
  return ok;
}

void PrintSummary(const RunOptions& o, pid_t root, const std::vector<ManifestEntry>& entries) {
  if (entries.empty()) {
    std::cerr
        << "heaprec: no profile was written (did the program end with _exit, abort or a signal?)\n";
    return;
  }
  std::cerr << "heaprec: wrote " << entries.size()
            << (entries.size() == 1 ? " profile" : " profiles") << ":\n";
  for (const ManifestEntry& e : entries) {
    std::cerr << "  " << e.path << "  (pid " << e.pid << ", " << e.reason << ")\n";
  }
  const ManifestEntry* main_profile = nullptr;
  for (const ManifestEntry& e : entries) {
    if (e.pid == root && e.reason == "exit") main_profile = &e;
  }
  if (main_profile == nullptr || o.top == 0) return;
  try {
    Profile profile = ReadProfileFile(main_profile->path);
    ReportOptions report;
    report.source = main_profile->path;
    report.sample_index = "inuse_space";
    report.top = o.top;
    std::cerr << "\n";
    PrintReport(profile, report, std::cerr);
  } catch (const std::exception& error) {
    std::cerr << "heaprec: " << error.what() << "\n";
  }
}

int Run(const RunOptions& o) {
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
  std::string manifest =
      (std::filesystem::temp_directory_path() / "heaprec-manifest-XXXXXX").string();
  int manifest_fd = mkstemp(manifest.data());
  if (manifest_fd < 0) {
    std::cerr << "heaprec run: cannot create a temporary file: " << std::strerror(errno) << "\n";
    return kExitFailure;
  }
  close(manifest_fd);
  SetEnvironment(o, library, manifest);

  // Terminal signals reach the whole process group, the program included; heaprec waits for it
  // to finish and collects its profiles. Signals sent to heaprec alone are passed on.
  signal(SIGINT, SIG_IGN);
  signal(SIGQUIT, SIG_IGN);
  struct sigaction forward = {};
  forward.sa_handler = ForwardSignal;
  sigemptyset(&forward.sa_mask);
  for (int s : {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2}) sigaction(s, &forward, nullptr);

  int exec_errno = 0;
  pid_t pid = StartProgram(o, &exec_errno);
  if (pid < 0) {
    std::cerr << "heaprec run: cannot start a process: " << std::strerror(errno) << "\n";
    unlink(manifest.c_str());
    return kExitFailure;
  }
  g_child = pid;
  if (exec_errno != 0) {
    waitpid(pid, nullptr, 0);
    std::cerr << "heaprec run: cannot run '" << o.command[0] << "': " << std::strerror(exec_errno)
              << "\n";
    unlink(manifest.c_str());
    return exec_errno == ENOENT ? 127 : 126;
  }
  int status = WaitForProgram(pid);
  std::vector<ManifestEntry> entries = ReadManifest(manifest);
  unlink(manifest.c_str());
  if (o.symbolize) SymbolizeProfiles(entries);
  PrintSummary(o, pid, entries);
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
      "--sample-interval, --unwind, --dump-signal and --no-follow are for native programs only.\n"
      "Output templates expand %p (pid), %t (time), %e (program name).\n"
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
  cmd->add_option("--unwind", options->unwind, "Native: stack unwinder, libunwind (default) or fp");
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
