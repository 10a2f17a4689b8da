// `heaprec run`: runs a program with the preload library (or, with --ruby, with the Ruby gem's
// autorun file), symbolizes the profiles every process wrote (those of ended processes while the
// program runs, run_symbolizer.h), waits for it, and prints the top allocation sites of the
// program's final profile.
//
// The CLI passes its settings to the profiler through the environment (HEAPREC_*, see
// run_environment.h), exactly as a user profiling a service under a supervisor would, so both paths
// are the same code. The profiler reports each file it writes in a manifest (run_manifest.h),
// which is how files from forked and exec'd descendants are found. Everything heaprec prints goes
// to stderr: the program's stdout is left exactly as it would be without the profiler. Starting
// and waiting: program_runner.h; what is printed afterwards: run_summary.h.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/install_layout.h"
#include "cli/option_helpers.h"
#include "cli/program_runner.h"
#include "cli/push_options.h"
#include "cli/run_environment.h"
#include "cli/run_manifest.h"
#include "cli/run_push.h"
#include "cli/run_recovery.h"
#include "cli/run_summary.h"
#include "cli/run_symbolizer.h"
#include "preload/control/settings.h"
#include "schema/manifest.h"

namespace heaprec::cli {
namespace {

// The program's command line, split off before CLI11 parses heaprec's own options (see
// SplitRunCommandLine): handed to the program exactly as given.
std::vector<std::string> g_program_arguments;

std::string SelfExecutable() {
  std::error_code ec;
  return std::filesystem::read_symlink("/proc/self/exe", ec).string();
}

// Checks the flags with the rows of the settings table (preload/control/settings.h), the parsers
// the library itself applies, so a bad value fails here with a usage error instead of a disabled
// profiler.
bool ValidateOptions(const RunOptions& o) {
  std::string error = CheckRunMode(o);
  if (error.empty()) error = CheckRunSettings(o);
  if (error.empty()) return true;
  std::cerr << "heaprec run: " << error << "\n";
  return false;
}

// Registers the flag of one row of the settings table on `heaprec run`: an option taking the
// row's value, or a switch. What is given is kept as text in options->settings, for
// ValidateOptions and then the program's environment.
void AddSettingFlag(CLI::App* cmd, const std::shared_ptr<RunOptions>& options, const char* flag,
                    const std::string& description) {
  const preload::SettingRow* row = preload::FindSettingByFlag(flag);
  if (row == nullptr) throw std::logic_error(std::string("no setting has the flag ") + flag);
  const char* variable = row->variable;
  if (row->value_name == nullptr) {
    cmd->add_flag_callback(
        flag, [options, variable] { options->settings[variable] = "1"; }, description);
  } else {
    cmd->add_option_function<std::string>(
           flag,
           [options, variable](const std::string& value) { options->settings[variable] = value; },
           description)
        ->option_text(row->value_name);
  }
}

// The directory holding the Ruby gem's heaprec/autorun.rb, or "" after saying why there is none.
std::string FindRubyLibrary() {
  const char* override_directory = std::getenv("HEAPREC_RUBY_LIB");
  std::string self = SelfExecutable();
  std::string directory = RubyLibraryDirectory(self, override_directory);
  if (HasRubyAutorun(directory)) return directory;
  bool overridden = override_directory != nullptr && *override_directory != '\0';
  if (std::string installed = InstalledRubyLibrary(self); !overridden && !installed.empty()) {
    return installed;
  }
  std::cerr << "heaprec run: --ruby: no heaprec/autorun.rb in '" << directory << "'"
            << (overridden
                    ? " (from HEAPREC_RUBY_LIB)"
                    : "; set HEAPREC_RUBY_LIB to the directory that holds heaprec/autorun.rb")
            << "\n";
  return {};
}

void SetEnvironment(const RunOptions& o, const std::string& library, const std::string& manifest,
                    const std::string& native_library) {
  for (const auto& [name, value] :
       RunEnvironment(o, library, manifest, std::getenv, native_library)) {
    setenv(name.c_str(), value.c_str(), 1);
  }
}

// With --ruby: libheaprec.so, which samples the native bytes behind Ruby objects (runtime mode,
// include/heaprec/runtime.h); "" after one line saying why not, and the run goes on with objects
// measured as before.
std::string NativeBytesLibrary() {
  std::string error;
  std::string library = FindPreloadLibrary(&error);
  if (library.empty()) {
    std::cerr << "heaprec run: --ruby: native bytes are not sampled (" << error
              << "); objects are measured at each dump instead\n";
  }
  return library;
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

// With --push: the pusher's settings, checked before the program runs; the application name is
// the program's unless --app gives one. False after the usage error.
bool MakeRunPushConfig(const RunOptions& o, const PushArgs& args, push::PushConfig* config) {
  if (std::string error = MakePushConfig(args, config); !error.empty()) {
    std::cerr << "heaprec run: " << error << "\n";
    return false;
  }
  if (config->app.empty()) {
    config->app = push::SanitizeAppName(std::filesystem::path(o.command[0]).filename().string());
  }
  config->symbolize = o.symbolize;
  config->symbol_cache = o.symbol_cache;
  return true;
}

int Run(const RunOptions& o, const PushArgs& push_args) {
  ReserveStandardDescriptors();
  if (o.command.empty()) {
    std::cerr
        << "heaprec run: no program given (usage: heaprec run [OPTIONS] -- PROGRAM [ARGS...])\n";
    return kExitUsage;
  }
  if (!ValidateOptions(o)) return kExitUsage;
  push::PushConfig push_config;
  bool pushing = !push_args.url.empty();
  if (!pushing &&
      (!push_args.app.empty() || !push_args.labels.empty() || !push_args.headers.empty())) {
    std::cerr << "heaprec run: --app, --label and --push-header go with --push URL\n";
    return kExitUsage;
  }
  if (pushing && !MakeRunPushConfig(o, push_args, &push_config)) return kExitUsage;
  std::string library_error;
  std::string library = o.ruby ? FindRubyLibrary() : FindPreloadLibrary(&library_error);
  if (library.empty()) {
    if (!o.ruby) std::cerr << "heaprec run: " << library_error << "\n";
    // A HEAPREC_LIBRARY that cannot be preloaded is the caller's mistake; a missing or broken
    // installed library is not.
    return !o.ruby && ExplicitPreloadLibrary() != nullptr ? kExitUsage : kExitFailure;
  }
  bool unprofiled = WarnIfStatic(o);
  std::string manifest = CreateManifest();
  if (manifest.empty()) return kExitFailure;
  SetEnvironment(o, library, manifest, o.ruby ? NativeBytesLibrary() : "");
  // The pusher sends each file as it is listed; the peak of a process killed before its first
  // write would otherwise be only in its heap record, which heaprec run reads after pushing.
  if (pushing) setenv(schema::kPeakAtOnceVariable, "1", 1);
  // Every profile is rewritten, compressed: the library need not compress it first (nor heaprec
  // decompress it). The pusher sends files as written: compressed.
  if (o.symbolize && !pushing && !o.ruby) setenv(schema::kUncompressedVariable, "1", 1);
  std::unique_ptr<RunPusher> pusher;
  if (pushing) {
    pusher = std::make_unique<RunPusher>(push_config, manifest, push_args.timeout_seconds);
  }
  // The profiles of ended processes are symbolized while the program runs; not with --push, whose
  // pusher sends each file as written and follows the rewrites after the program.
  std::unique_ptr<RunSymbolizer> symbolizer;
  if (o.symbolize) symbolizer = std::make_unique<RunSymbolizer>(o.symbol_cache);
  pid_t pid = -1;
  int status = RunProgram(o, &pid, [&] {
    if (pusher) pusher->Start();
    if (symbolizer && !pusher) symbolizer->Follow(manifest);
  });
  if (symbolizer) symbolizer->StopFollowing();
  if (pusher) pusher->Finish();  // before the files are rewritten with their symbols
  Manifest written = ReadManifest(manifest);
  unlink(manifest.c_str());
  if (pid < 0) return status;
  RecoverKilledProcesses(written, pid, status > 128 && status < 128 + 65 ? status - 128 : 0);
  RemoveRecordSpares(written);
  if (symbolizer) symbolizer->Finish(written.profiles);
  if (pusher) pusher->FollowRewrites(written.profiles);
  PrintSummary(o, pid, written, unprofiled);
  return status;
}

}  // namespace

int SplitRunCommandLine(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || std::string_view(argv[1]) != "run") return argc;
  const CLI::App* run = app.get_subcommand("run");
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    int program_start = -1, options_end = i;
    if (arg == "--") {
      program_start = i + 1;
    } else if (arg.empty() || arg[0] != '-') {
      program_start = i;
    } else if (arg.find('=') == std::string::npos) {
      // An option that takes a value, as registered: its value follows, whatever it looks like.
      const CLI::Option* option = run->get_option_no_throw(arg);
      if (option != nullptr && option->get_expected_max() > 0) ++i;
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
  auto push_args = std::make_shared<PushArgs>();
  options->output = preload::kDefaultOutputTemplate;
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Run a program under the live-heap profiler, then print its top allocation sites.\n"
      "Every process of the program writes a profile at exit (and more with --dump-*); heaprec "
      "symbolizes them and lists them.");
  // Documentation only: SplitRunCommandLine takes the program's arguments before CLI11 parses.
  cmd->add_option("PROGRAM", options->command,
                  "The program and its arguments, passed as given: after --, or from the first "
                  "argument that is not an option")
      ->option_text("[--] PROGRAM [ARGS...]");
  cmd->footer(
      "Native programs: libheaprec.so is preloaded (LD_PRELOAD). Every option has an environment\n"
      "twin it reads (e.g. --sample-interval is HEAPREC_SAMPLE_INTERVAL).\n"
      "Ruby programs: heaprec run --ruby [--sample-every N] -- ruby app.rb ARGS\n"
      "(or -- bundle exec ...). heaprec prepends its Ruby library to RUBYLIB and\n"
      "-rheaprec/autorun to RUBYOPT, so every Ruby process of the program profiles its live\n"
      "objects, and preloads libheaprec.so in runtime mode (HEAPREC_RUNTIME=ruby), which samples\n"
      "the native bytes behind them every --sample-interval bytes. The library is lib/ruby\n"
      "beside heaprec's lib/ directory in the build tree, Ruby's vendor directories installed;\n"
      "HEAPREC_RUBY_LIB overrides it. --sample-every is HEAPREC_SAMPLE_EVERY.\n"
      "HEAPREC_LIBRARY overrides libheaprec.so. --unwind, --dump-above, --quiet and\n"
      "--no-follow are for native programs only.\n"
      "Output templates expand %p (pid), %t (time), %e (program name); -o naming a directory\n"
      "writes each profile in it by the default name.\n"
      "Signals: a terminal's Ctrl-C, Ctrl-\\ and hangup reach the program directly; INT, QUIT,\n"
      "TERM, HUP, USR1, USR2 and the dump signal sent to heaprec with kill are passed on to it.\n"
      "A statically linked program runs unprofiled: LD_PRELOAD cannot reach it.\n"
      "Exit status: the program's own (128+N if it was killed by signal N).\n"
      "\n"
      "Examples:\n"
      "  heaprec run -- ./myprogram --its-own-flag\n"
      "  heaprec run --sample-interval 1 --top 20 -- ./myprogram     every allocation, exactly\n"
      "  heaprec run --dump-interval 10 -o /var/tmp/heap/%e.%p.pb.gz -- ./server\n"
      "  heaprec run --http 6060 -- ./server   then: go tool pprof "
      "http://127.0.0.1:6060/debug/pprof/heap\n"
      "  heaprec run --dormant --dump-signal SIGUSR2 -- ./server       then: heaprec attach PID\n"
      "  heaprec run --ruby -- bundle exec ruby app.rb\n"
      "  heaprec run --dump-interval 60 --push http://pyroscope:4040 --label env=staging -- "
      "./server\n"
      "\n"
      "--push: every profile goes to Pyroscope's /ingest as written (peak profiles only for a\n"
      "process that ended without a final one); failed pushes are retried until --push-timeout\n"
      "after the program ends; what was not accepted stays on disk, listed one line each (push it\n"
      "later with heaprec agent DIR --once --push URL). The exit status stays the program's.\n"
      "--push, --app, --label, --push-header and --push-timeout are heaprec's own: they have no\n"
      "environment twin.");
  cmd->add_flag("--ruby", options->ruby,
                "Profile Ruby objects (through RUBYOPT=-rheaprec/autorun) instead of native "
                "allocations");
  AddSettingFlag(cmd, options, "--sample-interval",
                 "Native: mean bytes between samples (default 512K; 1 = record every allocation "
                 "exactly)");
  AddSettingFlag(cmd, options, "--sample-every",
                 "Ruby (--ruby): sample 1 in N objects on average, each counting N (default "
                 "1000; 1 = every object, exact)");
  AddSettingFlag(cmd, options, "--ruby-liveness",
                 "Ruby (--ruby): how dumps learn which sampled objects live, object_id or "
                 "weak_map (default: object_id up to Ruby 3.4, weak_map from 3.5)");
  cmd->add_option("-o,--output", options->output,
                  "Profile path template, or a directory to write heaprec.%e.%p.pb.gz in")
      ->default_str(preload::kDefaultOutputTemplate)
      ->option_text(preload::FindSettingByFlag("--output")->value_name)
      ->check(InExistingDirectory());
  AddSettingFlag(cmd, options, "--dump-interval", "Also write a profile every SECONDS");
  AddSettingFlag(cmd, options, "--dump-signal",
                 "Also write a profile on this signal (e.g. SIGUSR2)");
  AddSettingFlag(cmd, options, "--max-depth",
                 "Frames kept per stack, 1-1024 (default 128; Ruby 400)");
  AddSettingFlag(cmd, options, "--dump-above",
                 "Native: also write a profile each time the live heap crosses another BYTES "
                 "(BYTES, 2x, 3x, ...)");
  AddSettingFlag(cmd, options, "--quiet",
                 "Native: no line on stderr for each profile written on --dump-signal");
  AddSettingFlag(cmd, options, "--no-heap-record",
                 "Native: keep no heap record (NAME.PID.record, from which a process killed by "
                 "SIGKILL or the OOM killer still gets the profile of its heap at death)");
  AddSettingFlag(cmd, options, "--unwind",
                 "Native: stack unwinder, dwarf (default; heaprec's own, cached per return "
                 "address), libgcc "
                 "(libgcc's, uncached), check (libgcc's, compared with dwarf's on every sample) "
                 "or fp (frame pointers)");
  AddSettingFlag(cmd, options, "--seed", "Fixed sampler seed, for reproducible runs");
  AddSettingFlag(cmd, options, "--no-follow",
                 "Native: do not profile programs the program executes");
  AddSettingFlag(cmd, options, "--dormant",
                 "Native: start with sampling off, at no cost, until `heaprec attach PID` "
                 "(needs --dump-signal, which carries attach and detach)");
  AddSettingFlag(cmd, options, "--http",
                 "The process serves a fresh profile at GET /debug/pprof/heap on ADDR: a "
                 "port (6060), a host and port (127.0.0.1:6060, [::1]:6060, localhost:6060; "
                 "loopback only unless --http-public; port 0 = any free one, printed), or a Unix "
                 "socket path (/run/app.sock, ./app.sock, unix:app.sock)");
  AddSettingFlag(cmd, options, "--http-public",
                 "Let --http listen on a non-loopback address (anyone who can reach it "
                 "can read the profile)");
  cmd->add_flag("!--no-symbolize", options->symbolize, "Leave the profiles unsymbolized");
  cmd->add_flag("!--no-cache", options->symbol_cache,
                "Symbolize without the on-disk symbol cache (neither read nor written)");
  AddTopOption(cmd, options->top, "Sites to print at the end (0 = none)");
  cmd->add_option("--push", push_args->url,
                  "Push each profile to this Pyroscope server (POST URL/ingest) as it is written")
      ->option_text("URL");
  AddPushOptions(cmd, *push_args,
                 "With --push: how long to keep pushing after the program ended (default 10)");
  cmd->callback([options, push_args, exit_code] {
    options->command = g_program_arguments;
    *exit_code = Run(*options, *push_args);
  });
}

}  // namespace heaprec::cli
