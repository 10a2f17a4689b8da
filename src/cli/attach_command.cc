// `heaprec attach PID`, `heaprec detach PID` and `heaprec dump PID` (docs/design/attach.md).
//
// A process heaprec is not in gets the library by ptrace (injection.h); one started dormant
// (heaprec run --dormant, docs/design/dormant.md) keeps its cooperative path: the command is its
// dump signal sent with sigqueue(2) and a value (schema/control.h), confirmed by the name the dump
// thread takes. Either is told from the library's control block (schema/attach.h), read from the
// process's memory: never from its environment or argv, which programs overwrite.
//
// Exit status: 0 done; 1 refused (one line says why; the process is left as it was) or not
// confirmed; 2 a bad command line; 130 interrupted (the process is left as it was, at most with the
// library loaded and idle).
#include <arpa/inet.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>

#include "cli/command_line.h"
#include "cli/command_turn.h"
#include "cli/commands.h"
#include "cli/descriptor_room.h"
#include "cli/glibc_heap.h"
#include "cli/injection.h"
#include "cli/install_layout.h"
#include "cli/process_binaries.h"
#include "cli/remote_process.h"
#include "cli/symbolization.h"
#include "preload/control/settings.h"
#include "preload/http/address.h"
#include "schema/attach.h"
#include "schema/control.h"

namespace heaprec::cli {
namespace {

constexpr int kConfirmWaitMs =
    10000;  // the dump thread answers at once; a loaded machine is slower
constexpr int kExitInterrupted = 130;
// How long a command waits for another one on the same process (CommandTurn): more than one takes,
// the confirmation's wait included, on a heap of gigabytes.
constexpr int kTurnWaitMs = 30000;

enum class Verb { kAttach, kDetach, kDump };

const char* VerbName(Verb verb) {
  return verb == Verb::kAttach ? "attach" : verb == Verb::kDetach ? "detach" : "dump";
}

struct ControlArgs {
  std::string pid;
  std::string output;  // attach: the template; dump: the file
  std::string sample_interval, http, dump_signal, dump_interval;
  bool no_symbolize = false;  // dump
};

// `name` (a process's comm) fit for a file name: anything but letters, digits, '.', '-' and '_'
// becomes '_'; "process" when empty.
std::string FileNamePart(std::string name) {
  if (name.empty()) return "process";
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  }
  return name;
}

// A refusal: one line, and the status.
struct Outcome {
  int status = kExitOk;
  std::string message;
  // A dump's profile, to be symbolized once the process is no longer held by the command (its
  // turn given back, interrupts no longer deferred: symbolizing a large program takes seconds).
  std::string to_symbolize{};
};

Outcome Refuse(const std::string& message) { return {kExitFailure, message}; }

void Pause(int ms) {
  timespec t = {0, ms * 1000000L};
  nanosleep(&t, nullptr);
}

// SIGINT, SIGTERM, SIGHUP and SIGQUIT wait while the process is held: a Ctrl-C between two calls
// made in it must not leave it half-changed. The command looks at them between the steps.
class DeferredInterrupts {
 public:
  DeferredInterrupts() {
    sigemptyset(&set_);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&set_, s);
    sigprocmask(SIG_BLOCK, &set_, &previous_);
  }
  ~DeferredInterrupts() {
    // What arrived is consumed here: the command reports it and exits 130 itself.
    timespec zero = {0, 0};
    while (sigtimedwait(&set_, nullptr, &zero) > 0) {
    }
    sigprocmask(SIG_SETMASK, &previous_, nullptr);
  }
  bool Arrived() const {
    sigset_t pending;
    sigpending(&pending);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
      if (sigismember(&pending, s)) return true;
    }
    return false;
  }

 private:
  sigset_t set_, previous_;
};

std::string PermissionHint() {
  return "permission denied: ptrace needs root, CAP_SYS_PTRACE, or the same user with "
         "/proc/sys/kernel/yama/ptrace_scope at 0 (in a container: --cap-add SYS_PTRACE and "
         "--pid=host, or a Kubernetes ephemeral debug container)";
}

// Reads the library's control block, when heaprec is in the process.
bool ReadControlBlock(const RemoteProcess& process, schema::ControlBlock* block) {
  std::uint64_t base = HeaprecLibraryBase(process.Mappings());
  if (base == 0) return false;
  std::uint64_t address = process.Symbol(base, schema::kControlBlockSymbol);
  return address != 0 && process.Read(address, block, sizeof(*block)) &&
         std::memcmp(block->magic, schema::kControlMagic, sizeof(block->magic)) == 0;
}

// A process whose main thread ended (pthread_exit in main) while others run shows the main
// thread's state, a zombie, and the kernel has dropped that thread's memory map and descriptor
// table, through which /proc/PID/maps, process_vm_readv and pidfd_getfd reach the process: "" when
// the process is not one, else why heaprec cannot work on it.
std::string MainThreadEnded(const RemoteProcess& process) {
  char state = process.ProcessState();
  if (state != 'Z' && state != 'X') return "";
  int running = 0;  // the program's own threads
  for (const ThreadState& t : process.Threads()) {
    running += t.state != 'Z' && t.state != 'X' && t.name.rfind("heaprec:", 0) != 0;
  }
  std::string id = std::to_string(process.pid());
  if (running == 0) return "process " + id + " is not running (a zombie)";
  return "the main thread of process " + id + " has ended while " +
         (running == 1 ? std::string("another thread runs")
                       : std::to_string(running) + " other threads run") +
         ": the kernel has dropped the main thread's hold on the process's memory and "
         "descriptors, through which heaprec reaches them";
}

// What makes a process one heaprec must not touch, or "".
std::string Preflight(const RemoteProcess& process) {
  std::string id = std::to_string(process.pid());
  char state = process.ProcessState();
  if (state == '\0') return "no process " + id;
  if (std::string ended = MainThreadEnded(process); !ended.empty()) return ended;
  if (process.Mappings().empty()) return "cannot read process " + id + ": " + PermissionHint();
  for (const ThreadState& t : process.Threads()) {
    if (t.seccomp == 1) {
      return "process " + id + " has a thread (" + std::to_string(t.tid) +
             ") in strict seccomp mode, where any call heaprec made would kill it";
    }
  }
  ExecutableFacts exe = ReadExecutableFacts(process.ProcPath("exe"));
  if (!exe.readable) return "cannot read the executable of process " + id;
  if (!exe.dynamic) {
    return "process " + id + " runs a static executable: there is no loader to bring heaprec in";
  }
  if (exe.defines_malloc) {
    return "process " + id +
           " has its allocator linked into its executable: its allocations never reach a library";
  }
  if (process.ObjectBase(process.Mappings(), "/libc.so.6") == 0) {
    return "process " + id + " does not use glibc (no libc.so.6 is loaded)";
  }
  return "";
}

std::string Absolute(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof(cwd)) == nullptr) return path;
  return std::string(cwd) + "/" + path;
}

std::string DirectoryOf(const std::string& path) {
  std::size_t slash = path.rfind('/');
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Whether the process's user can create files in `directory` (its real ids; root can).
bool TargetCanWrite(uid_t uid, gid_t gid, const struct stat& directory) {
  if (uid == 0) return true;
  mode_t mode = directory.st_mode;
  if (directory.st_uid == uid) return (mode & 0300) == 0300;
  if (directory.st_gid == gid) return (mode & 0030) == 0030;
  return (mode & 0003) == 0003;
}

gid_t TargetGid(const RemoteProcess& process) {
  std::ifstream status(process.ProcPath("status"));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Gid:", 0) == 0) return static_cast<gid_t>(std::atol(line.c_str() + 4));
  }
  return static_cast<gid_t>(-1);
}

// Opens the directory profiles go to, as a descriptor to hand over. When the process's user may not
// write there, a subdirectory it owns is made for it (heaprec-attach.PID), said in *note.
int OpenOutputDirectory(const RemoteProcess& process, const std::string& directory,
                        std::string* note, std::string* error) {
  struct stat info;
  if (stat(directory.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    *error = "output directory '" + directory + "' does not exist";
    return -1;
  }
  std::string chosen = directory;
  uid_t uid = process.Uid();
  gid_t gid = TargetGid(process);
  if (!TargetCanWrite(uid, gid, info)) {
    chosen = directory + "/heaprec-attach." + std::to_string(process.pid());
    if ((mkdir(chosen.c_str(), 0750) != 0 && errno != EEXIST) ||
        chown(chosen.c_str(), uid, static_cast<gid_t>(-1)) != 0) {
      *error = "process " + std::to_string(process.pid()) + " runs as uid " + std::to_string(uid) +
               ", which cannot write '" + directory + "', and '" + chosen +
               "' cannot be made for it: " + std::strerror(errno);
      return -1;
    }
    *note =
        "; uid " + std::to_string(uid) + " cannot write " + directory + ", so they go to " + chosen;
  }
  int fd = open(chosen.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) *error = "cannot open '" + chosen + "': " + std::strerror(errno);
  return fd;
}

// Whether process `pid` is in another pid namespace than heaprec's (a container's, seen from the
// host): it knows itself by another pid than the one the operator gave.
bool InAnotherPidNamespace(pid_t pid) {
  struct stat own, its;
  return stat("/proc/self/ns/pid", &own) == 0 &&
         stat(("/proc/" + std::to_string(pid) + "/ns/pid").c_str(), &its) == 0 &&
         (own.st_ino != its.st_ino || own.st_dev != its.st_dev);
}

// The output template with its %p made `pid` ("%%" stays for the library to read as "%"): the
// profiles of a process in another pid namespace are named by the pid the operator knows it by,
// not by the one it has there (often 1, the same in every container).
std::string WithPid(const std::string& pattern, pid_t pid) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() &&
        (pattern[i + 1] == 'p' || pattern[i + 1] == '%')) {
      out += pattern[i + 1] == 'p' ? std::to_string(pid) : "%%";
      ++i;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

// "; serving http://127.0.0.1:41234/debug/pprof/heap" for an attach with --http ADDRESS, from the
// port the library published (the program's stderr is the program's: the library says nothing
// there); "" without --http.
std::string ServedAt(const std::string& address, int port) {
  if (address.empty()) return "";
  preload::HttpAddress parsed;
  const char* error = nullptr;
  if (!preload::ParseHttpAddress(address.c_str(), &parsed, &error)) return "";
  if (!parsed.is_unix) {
    if (port <= 0) return "; its --http endpoint did not start (the process's stderr says why)";
    const std::uint16_t network_port = htons(static_cast<std::uint16_t>(port));
    (parsed.socket.any.sa_family == AF_INET6 ? parsed.socket.ipv6.sin6_port
                                             : parsed.socket.ipv4.sin_port) = network_port;
  }
  char endpoint[PATH_MAX + 64];
  if (!preload::FormatHttpEndpoint(parsed, endpoint, sizeof(endpoint))) return "";
  return std::string("; serving ") + endpoint;
}

// The settings block for the library, checked with its own parsers (usage errors here).
bool BuildSettings(const ControlArgs& args, const std::string& output, char* block,
                   std::size_t capacity, std::string* error) {
  std::string text;
  auto add = [&](const char* flag, const std::string& value) {
    if (value.empty()) return true;
    const preload::SettingRow* row = preload::FindSettingByFlag(flag);
    preload::Settings scratch;
    const char* detail = nullptr;
    if (row == nullptr || !row->parse(value.c_str(), &scratch, &detail)) {
      *error = std::string(flag) + " '" + value + "' is invalid: " +
               (detail != nullptr ? detail : std::string("expected ") + (row ? row->expected : ""));
      return false;
    }
    text += std::string(row->variable) + "=" + value;
    text.push_back('\0');
    return true;
  };
  if (!add("--sample-interval", args.sample_interval) || !add("--http", args.http) ||
      !add("--dump-signal", args.dump_signal) || !add("--dump-interval", args.dump_interval) ||
      !add("--output", output)) {
    return false;
  }
  text.push_back('\0');
  if (text.size() > capacity) {
    *error = "the settings are too long";
    return false;
  }
  std::memcpy(block, text.data(), text.size());
  return true;
}

// Waits until the library carried out the command after `done` others.
bool WaitForLibrary(const RemoteProcess& process, std::uint64_t done, schema::ControlBlock* block) {
  for (int waited = 0; waited < kConfirmWaitMs; waited += 5) {
    if (ReadControlBlock(process, block) && block->commands_done > done) return true;
    Pause(5);
  }
  return false;
}

// The dormant process's path: its dump signal, confirmed by its dump thread's name.
std::string HeaprecThreadName(const RemoteProcess& process) {
  for (const ThreadState& t : process.Threads()) {
    if (t.name.rfind("heaprec:", 0) == 0) return t.name;
  }
  return "";
}

Outcome ControlDormant(const RemoteProcess& process, const schema::ControlBlock& block,
                       bool attach) {
  std::string id = std::to_string(process.pid());
  sigval value = {};
  value.sival_int = attach ? schema::kAttachSignalValue : schema::kDetachSignalValue;
  if (sigqueue(process.pid(), block.dump_signal, value) != 0) {
    return Refuse("cannot signal process " + id + ": " + std::strerror(errno));
  }
  for (int waited = 0; waited <= kConfirmWaitMs; waited += 10) {
    std::string name = HeaprecThreadName(process);
    bool confirmed = attach ? name == schema::kThreadSampling
                            : name == schema::kThreadDetached || name == schema::kThreadDormant;
    if (confirmed) {
      return {kExitOk, attach ? "process " + id +
                                    " (started dormant) samples now; its profiles hold allocations "
                                    "from here on"
                              : "process " + id +
                                    " stopped sampling; what it sampled stays in its "
                                    "profiles"};
    }
    Pause(10);
  }
  return Refuse("sent SIG" + std::string(sigabbrev_np(block.dump_signal)) + " to process " + id +
                ", which did not confirm within 10 s (does the program block the signal?)");
}

// A Ruby program run with `heaprec run --ruby --dormant` has no library to read: its control
// thread (ruby/lib/heaprec/autorun.rb) bears the same names, and its dump signal is the one its
// environment gave it. The signal, or 0 when the process is not one.
int RubyFrontEndSignal(const RemoteProcess& process) {
  if (HeaprecThreadName(process).empty()) return 0;
  std::ifstream in(process.ProcPath("environ"), std::ios::binary);
  std::string entry;
  constexpr std::string_view kPrefix = "HEAPREC_DUMP_SIGNAL=";
  while (std::getline(in, entry, '\0')) {
    if (entry.rfind(kPrefix, 0) != 0) continue;
    int signal_number = 0;
    return preload::ParseSignal(entry.c_str() + kPrefix.size(), &signal_number) ? signal_number : 0;
  }
  return 0;
}

// attach and detach of a dormant Ruby program, on its dump signal as for native ones.
Outcome ControlRuby(const RemoteProcess& process, int signal_number, Verb verb) {
  std::string id = std::to_string(process.pid());
  std::string name = HeaprecThreadName(process);
  if (verb == Verb::kDump) {
    return Refuse("process " + id + " is a Ruby program under heaprec's Ruby front end: `kill -" +
                  sigabbrev_np(signal_number) + " " + id + "` asks it for a profile");
  }
  if (verb == Verb::kAttach && name == schema::kThreadSampling) {
    return Refuse("process " + id + " has heaprec attached already (heaprec detach " + id +
                  " first)");
  }
  if (verb == Verb::kDetach && name != schema::kThreadSampling) {
    return Refuse("process " + id + " is not attached (heaprec attach " + id + " first)");
  }
  schema::ControlBlock block = {};
  block.dump_signal = signal_number;
  return ControlDormant(process, block, verb == Verb::kAttach);
}

// The tests' way to deliver a Ctrl-C at an exact step (tests/attach): HEAPREC_ATTACH_INTERRUPT
// names the step after which the command raises SIGINT at itself, which then waits like any other.
void InterruptForTestAfter(const char* step) {
  const char* wanted = getenv("HEAPREC_ATTACH_INTERRUPT");
  if (wanted != nullptr && std::strcmp(wanted, step) == 0) raise(SIGINT);
}

Outcome Run(const ControlArgs& args, Verb verb, const DeferredInterrupts& interrupts) {
  char* end = nullptr;
  errno = 0;
  long pid = std::strtol(args.pid.c_str(), &end, 10);
  if (args.pid.empty() || *end != '\0' || errno != 0 || pid <= 0 || pid > (1L << 22)) {
    return {kExitUsage, "PID '" + args.pid + "' is invalid: expected a process id"};
  }
  RemoteProcess process(static_cast<pid_t>(pid));
  std::string id = args.pid;
  if (process.ProcessState() == '\0') return Refuse("no process " + id);
  if (static_cast<pid_t>(pid) == getpid()) return Refuse("process " + id + " is heaprec itself");

  // Held until the command's outcome is known: the next command finds what this one left.
  CommandTurn turn(process);
  if (!turn.Wait(kTurnWaitMs, [&interrupts] { return interrupts.Arrived(); })) {
    if (interrupts.Arrived())
      return {kExitInterrupted, "interrupted: process " + id + " untouched"};
    return Refuse("another heaprec command on process " + id + " did not end within " +
                  std::to_string(kTurnWaitMs / 1000) + " s; try again");
  }
  schema::ControlBlock block = {};
  bool present = ReadControlBlock(process, &block);
  if (present && block.mode == schema::kModeDormant && verb != Verb::kDump) {
    return ControlDormant(process, block, verb == Verb::kAttach);
  }
  // A Ruby program's library (when it samples native bytes for the Ruby front end) is the front
  // end's to drive: attach, detach and dumps go to the front end.
  if (!present || block.mode == schema::kModeRuntime) {
    if (int signal_number = RubyFrontEndSignal(process)) {
      return ControlRuby(process, signal_number, verb);
    }
  }
  if (present && block.mode == schema::kModeRuntime) {
    return Refuse("process " + id +
                  " is profiled by heaprec's Ruby front end from its start: it writes its profiles "
                  "itself (at exit, and on its --dump-signal if it was given one)");
  }
  if (verb == Verb::kAttach && present && block.mode == schema::kModeStarted) {
    return Refuse("process " + id + " is profiled by heaprec from its start already");
  }
  if (verb == Verb::kAttach && present && block.sampling != 0) {
    return Refuse("process " + id + " has heaprec attached already (heaprec detach " + id +
                  " first)");
  }
  if (verb != Verb::kAttach && !present) {
    if (std::string ended = MainThreadEnded(process); !ended.empty()) return Refuse(ended);
    return Refuse("process " + id + " is not profiled by heaprec (heaprec attach " + id +
                  " first)");
  }
  if (verb == Verb::kDetach && block.sampling == 0) {
    return Refuse("process " + id + " is not attached (heaprec attach " + id + " first)");
  }
  if (verb == Verb::kAttach && !present) {
    std::string refusal = Preflight(process);
    if (!refusal.empty()) return Refuse(refusal);
  }

  // What to hand over: attach, the template's directory; dump, the file's.
  schema::AttachRequest request = {};
  request.handover_fd = -1;
  std::string note, error;
  int directory = -1;
  std::string destination;
  if (verb == Verb::kAttach) {
    request.command = schema::kCommandStart;
    std::string output =
        Absolute(args.output.empty() ? preload::kDefaultOutputTemplate : args.output);
    if (InAnotherPidNamespace(process.pid())) output = WithPid(output, process.pid());
    if (!BuildSettings(args, output, request.settings, sizeof(request.settings), &error)) {
      return {kExitUsage, error};
    }
    directory = OpenOutputDirectory(process, DirectoryOf(output), &note, &error);
    destination = DirectoryOf(output);
    if (!present) {
      // What the heap held before, read from outside while the process runs on; the profiles say
      // it (the memory the operator came for is mostly there).
      GlibcHeap heap = ReadGlibcHeap(process, process.Mappings());
      static_assert(sizeof(request.held_by_size) == sizeof(heap.by_size));
      std::memcpy(request.held_by_size, heap.by_size, sizeof(heap.by_size));
      request.held_walked = heap.in_use;
    }
  } else if (verb == Verb::kDump) {
    request.command = schema::kCommandDump;
    // Named like the profiles the library writes (heaprec.%e.%p...): by the program, then the pid.
    std::string default_name = "heaprec." + FileNamePart(process.StatusField("Name")) + "." + id +
                               "." + std::to_string(time(nullptr)) + ".pb.gz";
    std::string file = Absolute(
        args.output.empty() ? default_name : InDirectoryByDefault(args.output, default_name));
    std::string name = file.substr(file.rfind('/') + 1);
    if (name.empty() || name.size() >= sizeof(request.file_name)) {
      return {kExitUsage, "-o '" + args.output + "' is invalid: expected a file name"};
    }
    std::memcpy(request.file_name, name.c_str(), name.size() + 1);
    directory = OpenOutputDirectory(process, DirectoryOf(file), &note, &error);
    destination = note.empty() ? file : DirectoryOf(file) + "/heaprec-attach." + id + "/" + name;
  } else {
    request.command = schema::kCommandDetach;
  }
  if (verb != Verb::kDetach && directory < 0) return Refuse(error);
  std::unique_ptr<int, void (*)(int*)> directory_guard(&directory, [](int* fd) {
    if (*fd >= 0) close(*fd);
  });

  std::string library;
  if (verb == Verb::kAttach && !present) {
    library = FindPreloadLibrary(&error);
    if (library.empty()) return Refuse(error);
    std::string path = Absolute(library);
    if (path.size() < sizeof(request.library_path)) {
      std::memcpy(request.library_path, path.c_str(), path.size() + 1);
    }
  }
  int result = -1;
  std::uint64_t done = present ? block.commands_done : 0;
  Injection injection(process.pid());
  DescriptorRoom room(process.pid());
  // A detach's profile is written once the thread is let go, and a detach forgets the samples: it
  // is refused, nothing changed, when that profile could not get a descriptor.
  int needed = !library.empty() || directory >= 0 ? DescriptorRoom::kForInjection
                                                  : DescriptorRoom::kForProfile;
  if (!room.Make(needed, &error)) return Refuse(error);
  bool interrupted = false;
  {
    if (!injection.Begin(&error)) {
      return Refuse("cannot attach to process " + id + ": " +
                    (error.find("not permitted") != std::string::npos ? PermissionHint() : error));
    }
    InterruptForTestAfter("begin");
    interrupted = interrupts.Arrived();
    if (!interrupted && !library.empty() && !injection.Load(library, &error)) {
      return Refuse("cannot load heaprec into process " + id + ": " + error);
    }
    InterruptForTestAfter("load");
    interrupted = interrupted || interrupts.Arrived();
    if (!interrupted && directory >= 0) {
      request.handover_fd = injection.HandOver(directory, &error);
      if (request.handover_fd < 0) return Refuse(error);
    }
    InterruptForTestAfter("handover");
    interrupted = interrupted || interrupts.Arrived();
    if (!interrupted) result = injection.Command(request, &error);
    injection.End();
    room.Restore();
  }
  if (interrupted) {
    return {kExitInterrupted,
            "interrupted: process " + id + " was left as it was" +
                (library.empty() ? "" : " (heaprec's library may stay loaded, idle)")};
  }
  if (result < 0) return Refuse(error);
  switch (result) {
    case schema::kResultQueued:
      break;
    case schema::kResultAlreadyAttached:
      return Refuse("process " + id + " has heaprec attached already");
    case schema::kResultNotAttached:
      return Refuse("process " + id + " is not attached");
    case schema::kResultNotInjected:
      return Refuse("process " + id + " was started under heaprec: use its dump signal");
    case schema::kResultBusy:
      return Refuse("process " + id + " is still carrying out a command; try again");
    default:
      return Refuse("heaprec in process " + id + " refused the request (settings or directory)");
  }
  // Read the moment after the detach, the process's state may show the held thread on its way back
  // into the group stop: what counts is how it was found.
  if (verb == Verb::kAttach && injection.found_stopped() && ReadControlBlock(process, &block) &&
      block.sampling != 0) {
    return {kExitOk, "process " + id + " samples now, and stays stopped until it is continued (" +
                         "kill -CONT " + id + "); profiles go to " + destination + note};
  }
  if (verb != Verb::kAttach && injection.found_stopped()) {
    return {kExitOk, "process " + id + " is stopped: it " +
                         (verb == Verb::kDetach ? "detaches" : "writes the profile") +
                         " as soon as it is continued (kill -CONT " + id + ")"};
  }
  if (!WaitForLibrary(process, done, &block)) {
    return Refuse("process " + id + " did not confirm within 10 s");
  }
  double held_ms = static_cast<double>(injection.stopped_ns()) / 1e6;
  char held[32];
  std::snprintf(held, sizeof(held), "%.1f", held_ms);
  switch (verb) {
    case Verb::kAttach:
      if (block.sampling == 0) return Refuse("heaprec could not start sampling in process " + id);
      return {kExitOk, "process " + id + " samples now (thread " +
                           std::to_string(injection.held_thread()) + " held " + held +
                           " ms); profiles go to " + destination + note +
                           ServedAt(args.http, block.http_port) + "; heaprec detach " + id +
                           " ends it" + room.Note()};
    case Verb::kDetach:
      return {kExitOk, "process " + id + " stopped sampling and wrote a profile" +
                           (block.last_result != 0
                                ? std::string(" (failed: ") + std::strerror(block.last_result) + ")"
                                : std::string())};
    case Verb::kDump:
      if (block.last_result == ENOSYS) {
        return Refuse("process " + id + " has not sampled anything yet (never attached)");
      }
      if (block.last_result != 0) {
        return Refuse("process " + id + " could not write " + destination + ": " +
                      std::strerror(block.last_result));
      }
      return {kExitOk, "wrote " + destination + room.Note(),
              args.no_symbolize ? std::string() : destination};
  }
  return {};
}

void Register(CLI::App& app, int* exit_code, Verb verb) {
  auto args = std::make_shared<ControlArgs>();
  const char* description =
      verb == Verb::kAttach
          ? "Start profiling a running process, without restarting it.\n"
            "heaprec is loaded into it through ptrace (no debugger); its profiles then hold the "
            "allocations made from now on. A process started with --dormant is switched on "
            "through its dump signal instead."
      : verb == Verb::kDetach
          ? "Stop profiling a process attached with heaprec attach: it writes a profile, and "
            "its allocations go straight to its allocator again."
          : "Make a process heaprec profiles (attached, dormant or started under heaprec) "
            "write a profile now.";
  CLI::App* cmd = app.add_subcommand(VerbName(verb), description);
  cmd->add_option("PID", args->pid, "The process")->required();
  if (verb == Verb::kAttach) {
    cmd->add_option("-o,--output", args->output,
                    "Profile path template, or a directory, as for heaprec run (default "
                    "heaprec.%e.%p.pb.gz, in this command's directory)")
        ->transform(IntoDirectoryByDefault(preload::kDefaultOutputTemplate));
    cmd->add_option("--sample-interval", args->sample_interval, "Mean bytes between samples");
    cmd->add_option("--http", args->http, "Serve /debug/pprof/heap at ADDR from the process");
    cmd->add_option("--dump-signal", args->dump_signal, "A profile on this signal");
    cmd->add_option("--dump-interval", args->dump_interval, "A profile every SECONDS");
  }
  if (verb == Verb::kDump) {
    cmd->add_option("-o,--output", args->output,
                    "The profile's path, or a directory for it (default "
                    "heaprec.PROGRAM.PID.TIME.pb.gz here)");
    cmd->add_flag("--no-symbolize", args->no_symbolize,
                  "Leave the profile's frames as addresses (by default they are named at once, "
                  "from the binaries the process has mapped)");
  }
  std::string name = VerbName(verb);
  cmd->footer(
      "Needs ptrace permission over the process (root, CAP_SYS_PTRACE, or the same user under\n"
      "Yama's ptrace_scope 0). Exit status: 0 done, 1 refused or not confirmed (the process is\n"
      "left as it was), 2 bad command line, 130 interrupted.\n"
      "\n"
      "Examples:\n"
      "  heaprec " +
      name + " 1234\n" +
      (verb == Verb::kAttach ? "  heaprec attach -o /var/tmp/%e.%p.pb.gz \"$(pidof server)\"\n"
                               "  heaprec attach --sample-interval 64K --http 127.0.0.1:6060 1234"
       : verb == Verb::kDump ? "  heaprec dump -o now.pb.gz 1234"
                             : "  heaprec detach \"$(pidof server)\""));
  cmd->callback([args, exit_code, verb] {
    Outcome outcome;
    {
      DeferredInterrupts interrupts;
      outcome = Run(*args, verb, interrupts);
    }
    if (!outcome.to_symbolize.empty()) {
      // While the process runs, with its own binaries: one replaced on disk since it started is
      // found as the process has it (cli/process_binaries.h).
      ProcessBinaries binaries(RemoteProcess(static_cast<pid_t>(std::atol(args->pid.c_str()))));
      symbolize::SymbolizeOptions options = symbolize::CommandLineSymbolizeOptions();
      if (!binaries.directory().empty()) options.binary_paths.push_back(binaries.directory());
      SymbolizeFileInPlace(outcome.to_symbolize, options, "heaprec dump", std::cerr);
    }
    std::ostream& out = outcome.status == kExitOk ? std::cout : std::cerr;
    out << "heaprec " << VerbName(verb) << ": " << outcome.message << "\n";
    *exit_code = outcome.status;
  });
}

}  // namespace

void RegisterAttachCommands(CLI::App& app, int* exit_code) {
  Register(app, exit_code, Verb::kAttach);
  Register(app, exit_code, Verb::kDetach);
  Register(app, exit_code, Verb::kDump);
}

}  // namespace heaprec::cli
