// `heaprec attach PID` and `heaprec detach PID`: switch sampling on and off in a process started
// dormant (heaprec run --dormant, HEAPREC_DORMANT=1; docs/design/dormant.md).
//
// The command finds the process's dump signal in /proc/PID/environ, checks in /proc/PID/maps that
// libheaprec.so is loaded, and sends the signal with sigqueue(2) and the command's value
// (schema/control.h), which the library tells from a plain dump. The library's dump thread
// carries the command out and renames itself after the new state; the command waits for that name
// in /proc/PID/task/*/comm, so that "attached" means the process samples now.
#include <dirent.h>
#include <signal.h>
#include <time.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "base/file_io.h"
#include "cli/commands.h"
#include "preload/control/settings.h"
#include "schema/control.h"

namespace heaprec::cli {
namespace {

constexpr int kConfirmWaitMs = 5000;  // the dump thread answers at once; a loaded machine is slower

struct ControlArgs {
  std::string pid;
};

// Why a command cannot be sent (a one-line message and the exit status), or nothing.
struct Refusal {
  std::string message;
  int status = kExitOk;
};

// The value of `name` in a NUL-separated environment block, or "" when absent.
std::string EnvironmentValue(const std::string& block, const std::string& name) {
  std::istringstream entries(block);
  std::string entry;
  while (std::getline(entries, entry, '\0')) {
    if (entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 &&
        entry[name.size()] == '=') {
      return entry.substr(name.size() + 1);
    }
  }
  return "";
}

std::string Describe(int error) {
  return error == EACCES || error == EPERM ? "permission denied (it belongs to another user?)"
                                           : std::strerror(error);
}

Refusal CannotRead(const std::string& id, int error) {
  return {"cannot read process " + id + ": " + Describe(error), kExitUsage};
}

// Checks that `pid` is a process heaprec can command, and finds its dump signal.
Refusal Check(pid_t pid, int* signal_number) {
  std::string id = std::to_string(pid);
  if (kill(pid, 0) != 0 && errno == ESRCH) return {"no process " + id, kExitUsage};
  std::string environ;
  try {
    std::string maps = base::ReadFile("/proc/" + id + "/maps");
    // The kernel gives an empty file to those it may not show.
    if (maps.empty()) return CannotRead(id, EACCES);
    if (maps.find("libheaprec") == std::string::npos) {
      return {"process " + id + " is not profiled by heaprec (libheaprec.so is not loaded)",
              kExitUsage};
    }
    environ = base::ReadFile("/proc/" + id + "/environ");
  } catch (const base::FileError& e) {
    return CannotRead(id, e.error_number());
  }
  std::string signal_text = EnvironmentValue(environ, "HEAPREC_DUMP_SIGNAL");
  if (signal_text.empty() || !preload::ParseSignal(signal_text.c_str(), signal_number)) {
    return {"process " + id +
                " has no dump signal, which carries attach and detach (start it with heaprec run "
                "--dormant --dump-signal SIGUSR2)",
            kExitUsage};
  }
  std::string dormant = EnvironmentValue(environ, schema::kDormantVariable);
  if (!preload::IsTrue(dormant.c_str())) {
    return {"process " + id +
                " was not started dormant (heaprec run --dormant): it samples from the start",
            kExitUsage};
  }
  return {};
}

// The name of the process's thread that heaprec named (schema/control.h), or "".
std::string HeaprecThreadName(pid_t pid) {
  std::string task = "/proc/" + std::to_string(pid) + "/task";
  std::unique_ptr<DIR, int (*)(DIR*)> directory(opendir(task.c_str()), closedir);
  if (!directory) return "";
  while (dirent* entry = readdir(directory.get())) {
    if (entry->d_name[0] == '.') continue;
    std::ifstream comm(task + "/" + entry->d_name + "/comm");
    std::string name;
    if (std::getline(comm, name) && name.rfind("heaprec:", 0) == 0) return name;
  }
  return "";
}

// Whether the process's state is what the command asked for: sampling after attach; after detach,
// not sampling (detached, or dormant still: never attached).
bool Confirmed(pid_t pid, bool attach) {
  std::string name = HeaprecThreadName(pid);
  if (attach) return name == schema::kThreadSampling;
  return name == schema::kThreadDetached || name == schema::kThreadDormant;
}

bool WaitForConfirmation(pid_t pid, bool attach) {
  for (int waited = 0; waited < kConfirmWaitMs; waited += 10) {
    if (Confirmed(pid, attach)) return true;
    timespec pause = {0, 10 * 1000 * 1000};
    nanosleep(&pause, nullptr);
  }
  return Confirmed(pid, attach);
}

int Control(const ControlArgs& args, bool attach) {
  const char* command = attach ? "attach" : "detach";
  auto fail = [command](const std::string& message, int status) {
    std::cerr << "heaprec " << command << ": " << message << "\n";
    return status;
  };
  char* end = nullptr;
  errno = 0;
  long pid = std::strtol(args.pid.c_str(), &end, 10);
  if (args.pid.empty() || *end != '\0' || errno != 0 || pid <= 0 || pid > (1L << 22)) {
    return fail("PID '" + args.pid + "' is invalid: expected a process id", kExitUsage);
  }
  int signal_number = 0;
  Refusal refusal = Check(static_cast<pid_t>(pid), &signal_number);
  if (refusal.status != kExitOk) return fail(refusal.message, refusal.status);
  sigval value = {};
  value.sival_int = attach ? schema::kAttachSignalValue : schema::kDetachSignalValue;
  if (sigqueue(static_cast<pid_t>(pid), signal_number, value) != 0) {
    return fail("cannot signal process " + args.pid + ": " + Describe(errno), kExitUsage);
  }
  if (!WaitForConfirmation(static_cast<pid_t>(pid), attach)) {
    std::string state = HeaprecThreadName(static_cast<pid_t>(pid));
    return fail("sent SIG" + std::string(sigabbrev_np(signal_number)) + " to process " + args.pid +
                    ", which did not confirm within " + std::to_string(kConfirmWaitMs / 1000) +
                    " s (" +
                    (state.empty() ? std::string("no heaprec thread found")
                                   : "its heaprec thread is " + state) +
                    "; does the program block or ignore the signal?)",
                kExitFailure);
  }
  std::cout << "heaprec " << command << ": process " << args.pid
            << (attach ? " samples now; its profiles hold allocations from here on\n"
                       : " stopped sampling; what it sampled stays in its profiles\n");
  return kExitOk;
}

void Register(CLI::App& app, int* exit_code, bool attach) {
  auto args = std::make_shared<ControlArgs>();
  CLI::App* cmd = app.add_subcommand(
      attach ? "attach" : "detach",
      attach ? "Switch sampling on in a process started dormant (heaprec run --dormant).\n"
               "Its profiles then hold the allocations made from now on; blocks allocated before "
               "are not in them, and freeing them costs nothing."
             : "Switch sampling off again in a process started dormant and attached.\n"
               "What was sampled stays tracked and in its later profiles; new allocations are "
               "not sampled.");
  cmd->add_option("PID", args->pid, "The process")->required();
  cmd->footer(
      std::string(
          "The command travels on the process's dump signal (HEAPREC_DUMP_SIGNAL in its\n"
          "environment) with a value sigqueue(2) carries, so a plain kill stays a dump.\n"
          "heaprec waits up to 5 s for the process to confirm.\n"
          "Exit status: 0 done, 1 sent but not confirmed, 2 not a dormant heaprec process,\n"
          "no such process, or permission denied.\n"
          "\n"
          "Examples:\n"
          "  heaprec run --dormant --dump-signal SIGUSR2 -o /var/tmp/%e.%p.pb.gz -- ./server &\n") +
      (attach ? "  heaprec attach 1234\n"
                "  kill -USR2 1234                     a profile now\n"
                "  heaprec attach \"$(pidof server)\"    the same, by name"
              : "  heaprec detach 1234\n"
                "  heaprec detach \"$(pidof server)\"    the same, by name"));
  cmd->callback([args, exit_code, attach] { *exit_code = Control(*args, attach); });
}

}  // namespace

void RegisterAttachCommands(CLI::App& app, int* exit_code) {
  Register(app, exit_code, true);
  Register(app, exit_code, false);
}

}  // namespace heaprec::cli
