#include "preload/process/endings.h"

#include <errno.h>
#include <setjmp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

#include "preload/attach/dormant.h"
#include "preload/dump/dump.h"
#include "preload/dump/dump_thread.h"
#include "preload/export.h"
#include "preload/process/own_process.h"
#include "preload/process/signal_table.h"
#include "preload/thread_state.h"

namespace heaprec::preload {
namespace {

std::atomic<int> g_ending_thread{0};  // the thread writing the final profile from a handler
sigjmp_buf g_abandon_dump;            // for that thread: where a fault inside the dump returns to

int ThreadId() { return static_cast<int>(syscall(SYS_gettid)); }
int ProcessId() { return static_cast<int>(syscall(SYS_getpid)); }

// A fault the kernel raised on the faulting instruction: returning from the handler runs it again.
bool IsSynchronousFault(int signal_number, const siginfo_t* info) {
  return RoleOf(signal_number) == SignalRole::kFatal && signal_number != SIGABRT &&
         info != nullptr && info->si_code > 0;
}

void CallProgramHandler(const struct sigaction& action, int signal_number, siginfo_t* info,
                        void* context) {
  if ((action.sa_flags & SA_RESETHAND) != 0) ResetToDefault(signal_number);
  if ((action.sa_flags & SA_SIGINFO) != 0) {
    action.sa_sigaction(signal_number, info, context);
  } else {
    action.sa_handler(signal_number);
  }
}

// Writes the final profile once, from whichever thread got there first, then ends the process with
// `signal_number`'s default action.
void EndProcess(int signal_number, siginfo_t* info) {
  const int self = ThreadId();
  int owner = 0;
  if (!g_ending_thread.compare_exchange_strong(owner, self)) {
    // Another thread is ending the process and will take this one with it.
    for (;;) pause();
  }
  if (InOwnProcess() && sigsetjmp(g_abandon_dump, 0) == 0) {
    bool fatal = RoleOf(signal_number) == SignalRole::kFatal;
    DumpFinal(fatal ? DumpReason::kCrash : DumpReason::kTerminated, signal_number);
  }
  ResetToDefault(signal_number);
  // A fault is raised again by the instruction itself, with its own siginfo; anything else is
  // raised again here and delivered, with the default action, when the handler returns (it is
  // blocked until then, except for SA_NODEFER signals, which end the process right here).
  if (!IsSynchronousFault(signal_number, info))
    syscall(SYS_tgkill, ProcessId(), self, signal_number);
  g_ending_thread.store(0);
}

[[noreturn]] void ExitProcess(int status) {
  if (!t_state.in_hook && InOwnProcess()) DumpFinal(DumpReason::kUnderscoreExit, 0);
  for (;;) syscall(SYS_exit_group, status);
}

}  // namespace

void OnEndingSignal(int signal_number, siginfo_t* info, void* context) {
  if (g_ending_thread.load() == ThreadId()) {
    // A fault inside this thread's own final dump (a heap corrupted beyond writing): abandon it,
    // and let the signal the process was dying of end it. Any other signal waits for that end.
    if (RoleOf(signal_number) == SignalRole::kFatal) siglongjmp(g_abandon_dump, 1);
    return;
  }
  int saved_errno = errno;
  // The program may have installed a handler since the kernel chose this one.
  struct sigaction program = ProgramAction(signal_number);
  if ((program.sa_flags & SA_SIGINFO) != 0 || program.sa_handler != SIG_DFL) {
    if ((program.sa_flags & SA_SIGINFO) != 0 || program.sa_handler != SIG_IGN) {
      CallProgramHandler(program, signal_number, info, context);
    }
    errno = saved_errno;
    return;
  }
  if (t_state.in_hook) {
    if (IsSynchronousFault(signal_number, info)) {
      ResetToDefault(signal_number);  // a fault inside heaprec: no dump can be trusted now
    } else {
      t_state.deferred_signal = signal_number;
    }
    errno = saved_errno;
    return;
  }
  EndProcess(signal_number, info);
  errno = saved_errno;
}

void OnDumpSignal(int signal_number, siginfo_t* info, void* context) {
  int saved_errno = errno;
  // `heaprec attach` and `detach` are heaprec's, not the program's: its handler does not see them.
  if (TakeControlCommand(info)) {
    errno = saved_errno;
    return;
  }
  RequestSignalDump();
  struct sigaction program = ProgramAction(signal_number);
  bool is_handler = (program.sa_flags & SA_SIGINFO) != 0 ||
                    (program.sa_handler != SIG_DFL && program.sa_handler != SIG_IGN);
  errno = saved_errno;
  if (is_handler) CallProgramHandler(program, signal_number, info, context);
}

void RaiseDeferredSignal(int signal_number) {
  syscall(SYS_tgkill, ProcessId(), ThreadId(), signal_number);
}

}  // namespace heaprec::preload

// The program's own _exit and _Exit (exit() reaches the kernel through glibc's internal alias, and
// its profile through the library destructor).
HEAPREC_EXPORT void _exit(int status) { heaprec::preload::ExitProcess(status); }
HEAPREC_EXPORT void _Exit(int status) { heaprec::preload::ExitProcess(status); }
