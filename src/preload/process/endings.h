// Every way a process ends leaves its final profile, and the process then ends exactly as it
// would have without heaprec.
//
//   exit(), return from main   the library destructor (startup.cc)             reason=exit
//   _exit(), _Exit()            interposed here: profile, then exit_group       reason=_exit
//   fatal signal, default       OnEndingSignal: profile, then the default       reason=crash
//     action (SEGV BUS FPE ILL    action: a fault is re-executed, anything else
//     ABRT SYS TRAP)              re-raised, so status and core dump are the same
//   termination signal,         the same                                        reason=terminated
//     default action
//   SIGKILL, the OOM killer     nothing can run: the peak profile already on disk (dump/dump.h)
//
// A signal the program handles itself goes to its handler only (signal_table.h). The final dump
// from a signal handler is async-signal-safe: it takes only heaprec's futex locks, allocates only
// from its mmap arena and never calls malloc, stdio or the loader's locking functions. A signal
// that arrives while its thread is inside heaprec (which may hold those locks) is deferred until
// the thread leaves (HookGuard), a fault there ends the process without a profile, and a fault
// inside the crash dump abandons it: the process still dies of its original signal.
#pragma once

#include <signal.h>

namespace heaprec::preload {

// The kernel's handler for a fatal or termination signal whose program disposition is SIG_DFL.
void OnEndingSignal(int signal_number, siginfo_t* info, void* context);

// The kernel's handler for the dump signal: asks for a dump, then calls the program's handler.
void OnDumpSignal(int signal_number, siginfo_t* info, void* context);

// A signal deferred by OnEndingSignal, raised again by the thread once it left heaprec.
void RaiseDeferredSignal(int signal_number);

}  // namespace heaprec::preload
