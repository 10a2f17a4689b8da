// The dump thread: writes profiles every HEAPREC_DUMP_INTERVAL seconds and when HEAPREC_DUMP_SIGNAL
// arrives. Started only when one of the two is configured, so most programs never see an extra
// thread.
//
// The signal handler does one write(2) to a pipe (async-signal-safe); the thread, which blocks
// every signal so the program's handlers never run on it, does the dump. Dumping in the handler
// itself would take locks the interrupted thread may hold.
#pragma once

namespace heaprec::preload {

// Call once at start-up. Allocation-free apart from the thread's own stack (mmap by glibc).
void StartDumpThread();

}  // namespace heaprec::preload
