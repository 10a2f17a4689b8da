// The signal dispositions the program believes it has, and the ones the kernel really has.
//
// heaprec must write a profile when the process dies of a signal, which needs a handler of its own,
// yet the program must keep full control of every signal. So the program's dispositions are
// virtual for the signals that can end a process (fatal: SEGV BUS FPE ILL ABRT SYS TRAP;
// termination: HUP INT QUIT TERM USR1 USR2 PIPE ALRM XCPU XFSZ VTALRM PROF) and for the dump
// signal. sigaction, signal, bsd_signal, sysv_signal (interposed) read and write the virtual
// table, and the kernel is given:
//
//   program's disposition    kernel's
//   SIG_DFL                  heaprec's ending handler (endings.cc): final profile, then the
//                            default action, exactly (same status, same core dump)
//   SIG_IGN                  SIG_IGN
//   its own handler          that handler, exactly as given: heaprec is not in the way
//   (dump signal, not        heaprec's dump handler, which then does what the program asked
//    ignored)                (SIG_IGN stays SIG_IGN: heaprec says in one line that it cannot dump)
//
// Dispositions the program inherited are read at start-up, so an ignored SIGINT stays ignored.
// Calls that bypass the interposed functions (glibc's own internal calls, sigset, raw system calls)
// reach the kernel directly: the program's wish then holds there, and only its profile on that
// signal is lost.
//
// Async-signal-safe: the table is guarded by a spin lock held with all signals blocked, so a
// handler on the same thread can never find it taken.
#pragma once

#include <signal.h>

namespace heaprec::preload {

enum class SignalRole { kNone, kFatal, kTermination, kDump };

SignalRole RoleOf(int signal_number);

// Reads the inherited dispositions and installs heaprec's handlers. Call once at start-up.
void InstallSignalHandlers(int dump_signal);

// What the program asked for `signal_number` (what sigaction reports to it).
struct sigaction ProgramAction(int signal_number);

// Sets the program's disposition of `signal_number` to SIG_DFL, in the table and in the kernel:
// emulates SA_RESETHAND for a handler heaprec calls on the program's behalf, and lets the final
// raise of an ending signal take the default action.
void ResetToDefault(int signal_number);

// Notes the handlers already in place for the signals InstallSignalHandlers does not manage, for
// a library loaded into a running process (attach): its program installed them before heaprec was
// there. At exec the kernel resets every handler, and later ones come through the interposed
// functions, so a process heaprec starts with needs no such reading.
void NoteHandlersInPlace();

// Whether the program may run a handler of its own for an asynchronous signal (any but the fatal
// ones, which a fault raises where it happens): it installed one through the interposed functions,
// or one was in place when heaprec attached to the running process (NoteHandlersInPlace). glibc's
// own signals (between SIGRTMIN's kernel number 32 and SIGRTMIN) do not count. Once true, it stays
// true. Lock-free, for the allocation paths (alloc/tagged_blocks.cc).
bool ProgramHandlesAsynchronousSignals();

// Fills `set` with the asynchronous signals: every signal but the fatal ones.
void AsynchronousSignals(sigset_t* set);

// fork(): the forking thread holds the table (all signals blocked) across fork.
void LockSignalTableForFork();
void UnlockSignalTableAfterFork();

}  // namespace heaprec::preload
