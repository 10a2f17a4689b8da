// Writing profiles from inside the profiled process: the one-at-a-time dump, the final profile,
// the HTTP endpoint's stream, and the peak-heap copy. Everything here is async-signal-safe unless
// stated (the final dump may run in a signal handler, see process/endings.h): it takes only
// heaprec's futex locks and allocates only from the profiler's arena, never with malloc.
#pragma once

#include "core/byte_sink.h"
#include "core/heap_recorder.h"

namespace heaprec::preload {

// Why a profile was written: its reason= comment and manifest entry. The first four are final
// profiles (one per process, named by the template without a sequence number); see endings.h.
enum class DumpReason {
  kExit,            // exit() or return from main
  kUnderscoreExit,  // _exit() or _Exit()
  kCrash,           // a fatal signal with the default action
  kTerminated,      // a termination signal with the default action
  kInterval,        // HEAPREC_DUMP_INTERVAL
  kSignal,          // HEAPREC_DUMP_SIGNAL
  kApi,             // heaprec_dump()
  kPeak,            // the peak profile
  kAbove,           // HEAPREC_DUMP_ABOVE
  kHttp,            // served at /debug/pprof/heap (HEAPREC_HTTP), never written to a file
};

// Writes a profile (to `path`, or the next name from the template when null). Returns 0 or an errno
// value. Takes the dump lock: async-signal-safe unless the calling thread is inside heaprec
// (holding its locks).
int Dump(DumpReason reason, const char* path);

// A fresh profile, gzipped, into `body` (the HTTP endpoint's response). The snapshot is taken under
// the dump lock, then encoded and written without any of heaprec's locks held. Returns 0 or an
// errno value.
int StreamProfile(ByteSink& body);

// The process's final profile (once; later calls do nothing), with the ending signal's name in its
// comments when `signal_number` is not 0; then the peak profile next to it. Like Dump.
int DumpFinal(DumpReason reason, int signal_number);

// Where profiles go that cannot be written at their usual place after the process dropped its
// privileges (process/identity_hooks.cc): same file name, in this directory.
void SetFallbackDirectory(const char* directory);

// Writes the peak copy to disk if the file does not hold it yet (the dump thread).
void WritePeakProfile();

// After a sampled allocation: copies the live set if the live-bytes estimate passed 1.1x the last
// captured peak and asks the dump thread to write it; asks for a HEAPREC_DUMP_ABOVE profile when
// the estimate crossed the next line. May lock (try-lock only for the copy); allocates from the
// arena.
void MaybeCapturePeak(HeapRecorder& recorder);

// The dump locks (the dump's, then the peak copy's), held across exec (process/exec_hooks.cc) and
// fork (process/fork_handlers.cc): LockDumps waits for a dump in progress. After exec failed, or in
// the parent after fork, UnlockDumps lets them go; the child of fork re-creates them and starts its
// own dump state and peak instead.
void LockDumps();
void UnlockDumps();
void ResetDumpsAfterForkInChild();

}  // namespace heaprec::preload
