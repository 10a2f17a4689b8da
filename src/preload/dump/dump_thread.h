// The dump thread: writes the profiles that are not written by the thread that asked for them.
//
//   every HEAPREC_DUMP_INTERVAL seconds          reason=interval
//   on HEAPREC_DUMP_SIGNAL                       reason=signal (one line on stderr unless quiet)
//   when the live heap crossed HEAPREC_DUMP_ABOVE reason=above
//   the peak profile, as the peak grows          reason=peak, at most once per second
//   attach and detach in a dormant process       (dormant.h: the deferred start-up, no profile)
//
// Signal handlers and allocation hooks only raise a flag and wake the thread with a futex (no
// descriptor: nothing for the program to find in /proc/self/fd or close by mistake); the thread,
// which blocks every signal so the program's handlers never run on it, does the dump. It is
// started at start-up when an interval or a dump signal is set (again in a child after fork), and
// otherwise only when a peak profile first needs writing, so a program whose live heap stays under
// 64 KiB never sees an extra thread.
#pragma once

namespace heaprec::preload {

// Start-up, and the child after fork(): starts the thread if an interval or a dump signal is set.
void StartDumpThreadIfConfigured();

// Starts the thread if it is not running (a command of `heaprec attach/detach/dump`, injected.h).
void StartDumpThread();

// Async-signal-safe. Wakes the thread to look at its requests (dormant.cc's commands).
void WakeDumpThread();

// Async-signal-safe. A dump of reason=signal.
void RequestSignalDump();

// From the allocation hooks (inside a HookGuard): the peak grew, or the live heap crossed the
// HEAPREC_DUMP_ABOVE line. Starts the thread if it is not running.
void RequestPeakWrite();
void RequestAboveDump();

// The child after fork(): the thread was not copied.
void ForgetDumpThreadInChild();

// Starts a detached thread of heaprec's (this one, the HTTP server's) running body(argument), with
// every signal blocked, so that the program's handlers never run on it, and a 256 KiB stack.
bool StartHeaprecThread(void* (*body)(void*), void* argument = nullptr);

}  // namespace heaprec::preload
