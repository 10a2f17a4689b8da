#include "preload/process/signal_table.h"

#include <dlfcn.h>
#include <errno.h>
#include <string.h>

#include <atomic>

#include "preload/export.h"
#include "preload/messages.h"
#include "preload/process/endings.h"
#include "preload/process/next_symbol.h"

namespace heaprec::preload {
namespace {

using SigactionFn = int (*)(int, const struct sigaction*, struct sigaction*);

NextSymbol<SigactionFn> g_real_sigaction{"sigaction"};
std::atomic<bool> g_table_ready{false};
std::atomic_flag g_table_lock = ATOMIC_FLAG_INIT;
struct sigaction g_program_actions[NSIG];     // guarded by g_table_lock
int g_dump_signal = 0;                        // written once at start-up
std::atomic<bool> g_program_handlers{false};  // see ProgramHandlesAsynchronousSignals

SigactionFn RealSigaction() { return g_real_sigaction.get(); }

// Holds the table with every signal blocked on this thread, so no handler can run here meanwhile.
class TableLock {
 public:
  TableLock() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &saved_mask_);
    while (g_table_lock.test_and_set(std::memory_order_acquire)) {
    }
  }
  ~TableLock() {
    g_table_lock.clear(std::memory_order_release);
    pthread_sigmask(SIG_SETMASK, &saved_mask_, nullptr);
  }
  TableLock(const TableLock&) = delete;
  TableLock& operator=(const TableLock&) = delete;

 private:
  sigset_t saved_mask_;
};

bool IsDefault(const struct sigaction& a) {
  return (a.sa_flags & SA_SIGINFO) == 0 && a.sa_handler == SIG_DFL;
}
bool IsIgnore(const struct sigaction& a) {
  return (a.sa_flags & SA_SIGINFO) == 0 && a.sa_handler == SIG_IGN;
}

// Notes a disposition of the program's: a handler of its own for an asynchronous signal.
void NoteProgramAction(int signal_number, const struct sigaction& action) {
  const bool glibc_internal = signal_number >= 32 && signal_number < SIGRTMIN;
  if (RoleOf(signal_number) == SignalRole::kFatal || glibc_internal || IsDefault(action) ||
      IsIgnore(action)) {
    return;
  }
  g_program_handlers.store(true, std::memory_order_relaxed);
}

// What the kernel gets when the program asks for `wanted` (see the table in signal_table.h).
struct sigaction KernelAction(int signal_number, const struct sigaction& wanted) {
  SignalRole role = RoleOf(signal_number);
  struct sigaction action = {};
  sigemptyset(&action.sa_mask);
  if (role == SignalRole::kDump) {
    // Ignored means ignored: a handler, even heaprec's, would interrupt the program's sleeps and
    // waits (EINTR), which it asked never to happen. SayDumpSignalIgnored tells the user.
    if (IsIgnore(wanted)) return wanted;
    // The program's mask and flags apply to its handler, which heaprec's calls; SA_RESETHAND is
    // emulated (heaprec's own handler must stay).
    action.sa_sigaction = OnDumpSignal;
    action.sa_mask = wanted.sa_mask;
    action.sa_flags = (wanted.sa_flags & ~SA_RESETHAND) | SA_SIGINFO;
    if (IsDefault(wanted)) action.sa_flags = SA_SIGINFO | SA_RESTART;
    return action;
  }
  if (!IsDefault(wanted)) return wanted;
  action.sa_sigaction = OnEndingSignal;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
  if (role == SignalRole::kFatal) {
    // A fault inside the crash dump must reach the handler again (which abandons the dump), not
    // kill the process with a different signal than the one it was dying of.
    action.sa_flags |= SA_NODEFER;
  } else {
    // While one termination signal is being handled the others wait: they end the process anyway.
    for (int s = 1; s < NSIG; ++s) {
      if (RoleOf(s) == SignalRole::kTermination) sigaddset(&action.sa_mask, s);
    }
  }
  return action;
}

// Dumps on the dump signal never stop silently: one line when the program ignores it.
void SayDumpSignalIgnored(int signal_number) {
  const char* name = sigabbrev_np(signal_number);
  const char* parts[] = {"heaprec: the program ignores SIG", name != nullptr ? name : "?",
                         ", the dump signal: no profiles on it while it does\n"};
  ReportMessage(parts, sizeof(parts) / sizeof(parts[0]));
}

}  // namespace

SignalRole RoleOf(int signal_number) {
  if (signal_number <= 0 || signal_number >= NSIG) return SignalRole::kNone;
  if (signal_number == g_dump_signal) return SignalRole::kDump;
  switch (signal_number) {
    case SIGSEGV:
    case SIGBUS:
    case SIGFPE:
    case SIGILL:
    case SIGABRT:
    case SIGSYS:
    case SIGTRAP:
      return SignalRole::kFatal;
    case SIGHUP:
    case SIGINT:
    case SIGQUIT:
    case SIGTERM:
    case SIGUSR1:
    case SIGUSR2:
    case SIGPIPE:
    case SIGALRM:
    case SIGXCPU:
    case SIGXFSZ:
    case SIGVTALRM:
    case SIGPROF:
      return SignalRole::kTermination;
    default:
      return SignalRole::kNone;
  }
}

void InstallSignalHandlers(int dump_signal) {
  SigactionFn real = RealSigaction();
  if (real == nullptr) return;
  g_dump_signal = dump_signal;
  TableLock lock;
  for (int s = 1; s < NSIG; ++s) {
    if (RoleOf(s) == SignalRole::kNone) continue;
    if (real(s, nullptr, &g_program_actions[s]) != 0) continue;
    NoteProgramAction(s, g_program_actions[s]);
    struct sigaction kernel = KernelAction(s, g_program_actions[s]);
    real(s, &kernel, nullptr);
    if (s == dump_signal && IsIgnore(g_program_actions[s])) SayDumpSignalIgnored(s);
  }
  g_table_ready.store(true, std::memory_order_release);
}

struct sigaction ProgramAction(int signal_number) {
  TableLock lock;
  return g_program_actions[signal_number];
}

void ResetToDefault(int signal_number) {
  struct sigaction action = {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  SigactionFn real = RealSigaction();
  TableLock lock;
  g_program_actions[signal_number] = action;
  if (RoleOf(signal_number) != SignalRole::kDump) real(signal_number, &action, nullptr);
}

void NoteHandlersInPlace() {
  SigactionFn real = RealSigaction();
  if (real == nullptr) return;
  for (int s = 1; s < NSIG; ++s) {
    struct sigaction current = {};
    if (RoleOf(s) == SignalRole::kNone && real(s, nullptr, &current) == 0) {
      NoteProgramAction(s, current);
    }
  }
}

bool ProgramHandlesAsynchronousSignals() {
  return g_program_handlers.load(std::memory_order_relaxed);
}

void AsynchronousSignals(sigset_t* set) {
  sigfillset(set);
  for (int s = 1; s < NSIG; ++s) {
    if (RoleOf(s) == SignalRole::kFatal) sigdelset(set, s);
  }
}

void LockSignalTableForFork() {
  while (g_table_lock.test_and_set(std::memory_order_acquire)) {
  }
}
void UnlockSignalTableAfterFork() { g_table_lock.clear(std::memory_order_release); }

// The program's sigaction, on the virtual table for the signals heaprec manages.
int ProgramSigaction(int signal_number, const struct sigaction* act, struct sigaction* old) {
  SigactionFn real = RealSigaction();
  if (real == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  if (act != nullptr && signal_number > 0 && signal_number < NSIG) {
    NoteProgramAction(signal_number, *act);
  }
  if (!g_table_ready.load(std::memory_order_acquire) ||
      RoleOf(signal_number) == SignalRole::kNone) {
    return real(signal_number, act, old);
  }
  bool now_ignoring_dumps = false;
  {
    TableLock lock;
    if (act != nullptr) {
      struct sigaction kernel = KernelAction(signal_number, *act);
      if (real(signal_number, &kernel, nullptr) != 0) return -1;  // e.g. EINVAL: table unchanged
      now_ignoring_dumps = RoleOf(signal_number) == SignalRole::kDump && IsIgnore(*act) &&
                           !IsIgnore(g_program_actions[signal_number]);
    }
    if (old != nullptr) *old = g_program_actions[signal_number];
    if (act != nullptr) g_program_actions[signal_number] = *act;
  }
  if (now_ignoring_dumps) SayDumpSignalIgnored(signal_number);
  return 0;
}

// signal() and friends, built on the virtual sigaction with glibc's flags for each.
sighandler_t ProgramSignal(int signal_number, sighandler_t handler, int flags, bool mask_self) {
  struct sigaction action = {}, old = {};
  action.sa_handler = handler;
  action.sa_flags = flags;
  sigemptyset(&action.sa_mask);
  if (mask_self && signal_number > 0 && signal_number < NSIG) {
    sigaddset(&action.sa_mask, signal_number);
  }
  if (ProgramSigaction(signal_number, &action, &old) != 0) return SIG_ERR;
  return old.sa_handler;
}

}  // namespace heaprec::preload

using heaprec::preload::ProgramSigaction;
using heaprec::preload::ProgramSignal;

HEAPREC_EXPORT int sigaction(int signal_number, const struct sigaction* act,
                             struct sigaction* old) {
  return ProgramSigaction(signal_number, act, old);
}
HEAPREC_EXPORT int __sigaction(int signal_number, const struct sigaction* act,
                               struct sigaction* old) {
  return ProgramSigaction(signal_number, act, old);
}
// BSD semantics, glibc's default for signal(): restart system calls, block the signal in its
// handler.
HEAPREC_EXPORT sighandler_t signal(int signal_number, sighandler_t handler) {
  return ProgramSignal(signal_number, handler, SA_RESTART, true);
}
HEAPREC_EXPORT sighandler_t bsd_signal(int signal_number, sighandler_t handler) {
  return ProgramSignal(signal_number, handler, SA_RESTART, true);
}
// System V semantics: one-shot, not blocked in its handler.
HEAPREC_EXPORT sighandler_t sysv_signal(int signal_number, sighandler_t handler) {
  return ProgramSignal(signal_number, handler, SA_RESETHAND | SA_NODEFER, false);
}
HEAPREC_EXPORT sighandler_t __sysv_signal(int signal_number, sighandler_t handler) {
  return ProgramSignal(signal_number, handler, SA_RESETHAND | SA_NODEFER, false);
}
