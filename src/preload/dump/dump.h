// Writing profiles from inside the profiled process, one at a time: a dump on request (signal,
// interval, API, dump-above), the final profile as the process ends (process/endings.h), and the
// HTTP endpoint's stream. The peak profile is peak.h; what goes into a file, profile_writer.h.
//
// Everything here is async-signal-safe unless stated (the final dump may run in a signal
// handler): it takes only heaprec's futex locks and allocates only from the profiler's arena,
// never with malloc.
#pragma once

#include "core/byte_sink.h"
#include "preload/dump/dump_reason.h"

namespace heaprec::preload {

// Writes a profile (to `path`, or the next name from the template when null). Returns 0 or an errno
// value. Takes the dump lock: async-signal-safe unless the calling thread is inside heaprec
// (holding its locks).
int Dump(DumpReason reason, const char* path);

// The process's final profile (once; later calls do nothing), with the ending signal's name in its
// comments when `signal_number` is not 0; then the peak profile next to it. Like Dump.
int DumpFinal(DumpReason reason, int signal_number);

// Whether the final profile was written: the process is ending.
bool FinalDumpDone();

// A fresh profile, gzipped, into `body` (the HTTP endpoint's response). The snapshot is taken under
// the dump lock, then encoded and written without any of heaprec's locks held. Returns 0 or an
// errno value. `default_sample_type`: the type pprof shows first (schema::kInuseSpace for
// /debug/pprof/heap, kAllocSpace for /debug/pprof/allocs).
int StreamProfile(ByteSink& body, const char* default_sample_type);

// The dump locks (the dump's, then the peak copy's), held across exec (process/exec_hooks.cc) and
// fork (process/fork_handlers.cc): LockDumps waits for a dump in progress. After exec failed, or in
// the parent after fork, UnlockDumps lets them go; the child of fork re-creates them and starts its
// own dump state and peak instead.
void LockDumps();
void UnlockDumps();
// The dump's lock alone, without the peak copy's that allocating threads take to capture: for work
// that must not overlap fork, exec or the final dump, and must not make captures skip (the heap
// record's creation, record/heap_record.h).
void LockDumpOnly();
void UnlockDumpOnly();
void ResetDumpsAfterForkInChild();

}  // namespace heaprec::preload
