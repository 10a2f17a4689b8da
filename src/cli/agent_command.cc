// `heaprec agent DIR --push URL`: for services under a supervisor that write their profiles into
// DIR themselves (LD_PRELOAD=libheaprec.so HEAPREC_OUTPUT=DIR/...): watches DIR (polling once a
// second, the files heaprec's library has renamed into place) and pushes each new profile to
// Pyroscope (src/push), retrying until it is accepted; DIR/.heaprec-pushed remembers what was, so a
// restart sends nothing twice. Stops on SIGTERM or SIGINT once the request in flight is done.
// --once pushes what is there, for at most --push-timeout, and exits 0 only if all was accepted.
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include "cli/commands.h"
#include "cli/push_options.h"
#include "profile/pprof_reader.h"
#include "push/ingest.h"
#include "push/ledger.h"
#include "push/pusher.h"
#include "schema/profile_schema.h"

namespace heaprec::cli {
namespace {

constexpr double kPollSeconds = 1;

struct AgentArgs {
  std::string directory;
  PushArgs push;
  bool once = false;
  bool symbolize = true;
  bool symbol_cache = true;
};

// A peak profile is pushed only once its process has ended without a final profile beside it
// (killed by SIGKILL, the OOM killer): while the process lives the file is rewritten as the peak
// grows, and a final profile carries the live set later. Its pid is the profile's pid= comment,
// read again only when the file changes.
class PeakCheck {
 public:
  bool Ready(const std::string& path) {
    std::string final_path =
        push::SplitPath(path).first + "/" + push::FinalNameOfPeak(push::SplitPath(path).second);
    if (std::filesystem::exists(final_path)) return false;
    push::FileIdentity id = push::Identify(path);
    Known& known = known_[path];
    if (known.size != id.size || known.mtime_ns != id.mtime_ns) {
      known = Known{id.size, id.mtime_ns, PidOf(path)};
    }
    // No pid (not heaprec's): nothing says the process still runs.
    return known.pid <= 0 || (kill(known.pid, 0) != 0 && errno == ESRCH);
  }

 private:
  struct Known {
    std::int64_t size = -1, mtime_ns = -1;
    long pid = 0;
  };
  static long PidOf(const std::string& path) {
    try {
      profile::Profile p = profile::ReadProfileFile(path);
      std::string field = std::string(schema::kPidField) + "=";
      for (const std::string& comment : p.comments) {
        std::size_t at = comment.find(field);
        if (at != std::string::npos && (at == 0 || comment[at - 1] == ' ')) {
          return std::strtol(comment.c_str() + at + field.size(), nullptr, 10);
        }
      }
    } catch (const std::exception&) {
      // The pusher says what is wrong with the file when it reads it.
    }
    return 0;
  }
  std::map<std::string, Known> known_;
};

// Offers the complete profiles of the directory, in name order (dumps of one process in sequence).
void Scan(const std::string& directory, push::Pusher& pusher, PeakCheck& peaks) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(directory, ec)) {
    std::string name = entry.path().filename().string();
    if (push::IsCompleteProfileName(name) && entry.is_regular_file(ec)) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    std::string path = directory + "/" + name;
    if (push::IsPeakProfile(name) && !peaks.Ready(path)) continue;
    pusher.Offer(path);
  }
}

// Waits up to `seconds` for SIGTERM or SIGINT (blocked, so they wait for this); true if one came.
bool StopRequested(const sigset_t& stop, double seconds) {
  seconds = std::max(seconds, 0.0);
  timespec timeout{static_cast<time_t>(seconds),
                   static_cast<long>((seconds - std::floor(seconds)) * 1e9)};
  while (true) {
    int s = sigtimedwait(&stop, nullptr, &timeout);
    if (s > 0) return true;
    if (errno != EINTR) return false;
  }
}

int RunAgent(const AgentArgs& args) {
  push::PushConfig config;
  if (std::string error = MakePushConfig(args.push, &config); !error.empty()) {
    std::cerr << "heaprec agent: " << error << "\n";
    return kExitUsage;
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(args.directory, ec)) {
    std::cerr << "heaprec agent: '" << args.directory << "' is not a directory\n";
    return kExitUsage;
  }
  config.symbolize = args.symbolize;
  config.symbol_cache = args.symbol_cache;
  config.log_prefix = "heaprec agent";
  config.log_accepted = !args.once;
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  sigprocmask(SIG_BLOCK, &stop, nullptr);

  push::CurlTransport transport(push::CurlTimeouts{});
  push::Ledger ledger;
  push::Pusher pusher(config, &transport, &ledger, &std::cerr);
  PeakCheck peaks;
  double deadline = args.once ? push::MonotonicNow() + args.push.timeout_seconds : INFINITY;
  if (args.once) {
    transport.AbortAt(deadline);
  } else {
    std::cerr << "heaprec agent: pushing the profiles of " << args.directory << " to "
              << push::RedactedUrl(config.server) << "\n";
  }
  bool stopped = false;
  double next_scan = 0;
  while (true) {
    double now = push::MonotonicNow();
    if (!args.once && now >= next_scan) {
      Scan(args.directory, pusher, peaks);
      next_scan = now + kPollSeconds;
    } else if (args.once && next_scan == 0) {
      Scan(args.directory, pusher, peaks);
      next_scan = INFINITY;
    }
    // A stop request ends the work after the request in flight, not after the whole backlog.
    double next = pusher.Step(now, [] {
      sigset_t pending;
      sigpending(&pending);
      return sigismember(&pending, SIGTERM) == 1 || sigismember(&pending, SIGINT) == 1;
    });
    now = push::MonotonicNow();
    if (args.once && (pusher.queued() == 0 || now >= deadline)) break;
    double wake = std::min({next, next_scan, deadline});
    if (StopRequested(stop, std::min(wake - now, kPollSeconds))) {
      stopped = true;
      break;
    }
  }
  std::vector<std::string> not_pushed = pusher.NotAccepted();
  if (args.once) {
    if (not_pushed.empty()) {
      std::cerr << "heaprec agent: pushed " << pusher.accepted() << " profile"
                << (pusher.accepted() == 1 ? "" : "s") << "\n";
    }
    PrintNotPushed("heaprec agent", not_pushed, config);
    return not_pushed.empty() ? kExitOk : kExitFailure;
  }
  std::cerr << "heaprec agent: " << (stopped ? "stopping" : "stopped") << "; pushed "
            << pusher.accepted() << ", " << pusher.queued()
            << " waiting (kept on disk for the next run)\n";
  return kExitOk;
}

}  // namespace

void RegisterAgentCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<AgentArgs>();
  CLI::App* cmd = app.add_subcommand(
      "agent",
      "Push the profiles that services write into DIR to Pyroscope, as they appear.\n"
      "For programs profiled without heaprec run (LD_PRELOAD and HEAPREC_OUTPUT under a "
      "supervisor).");
  cmd->add_option("DIR", args->directory, "The directory the profiles are written into")
      ->required();
  cmd->add_option("--push", args->push.url, "The Pyroscope server (POST URL/ingest)")
      ->option_text("URL")
      ->required();
  AddPushOptions(cmd, args->push,
                 "With --once: how long to keep retrying before giving up (default 10)");
  cmd->add_flag("--once", args->once,
                "Push what DIR holds now, then exit: 0 if every profile was accepted, else 1");
  cmd->add_flag("!--no-symbolize", args->symbolize,
                "Push the profiles as written, without naming their frames first");
  cmd->add_flag("!--no-cache", args->symbol_cache,
                "Symbolize without the on-disk symbol cache (neither read nor written)");
  cmd->footer(
      "Every complete profile in DIR (*.pb.gz; not heaprec's temporaries) is pushed once, to\n"
      "POST URL/ingest (format=pprof; name= the application name and labels; from and until the\n"
      "second the profile was taken), symbolized in memory (the file is never changed or\n"
      "deleted). The application name is --app, else the file name's %e part\n"
      "(heaprec.%e.%p.pb.gz). A peak profile (NAME.peak.pb.gz) is pushed only once its\n"
      "process ended without a final profile. Failures without an answer, 408, 429 and 5xx are\n"
      "retried (1 s, doubled to 60 s); another refusal is reported once and not retried.\n"
      "DIR/.heaprec-pushed records what was accepted or refused: a restart sends nothing twice\n"
      "(delete its line to send a file again). SIGTERM or SIGINT: stops after the request in\n"
      "flight, status 0.\n"
      "\n"
      "Examples:\n"
      "  heaprec agent /var/tmp/heap --push http://pyroscope:4040 --app checkout "
      "--label env=prod\n"
      "  heaprec agent /var/tmp/heap --push https://user:token@profiles.example.com \\\n"
      "      --push-header 'X-Scope-OrgID: team-a' --label host=$(hostname)\n"
      "  heaprec agent /var/tmp/heap --once --push http://localhost:4040   from cron");
  cmd->callback([args, exit_code] { *exit_code = RunAgent(*args); });
}

}  // namespace heaprec::cli
