// Heaprec.dump: turns the recorder's live set into a pprof file.
//
//   GVL held    drain the pending queue; snapshot the live set (stacks pinned); for each object
//               ask the VM whether it is still alive (ObjectSpace._id2ref, or the weak map's
//               entry: weak_map_liveness.h): dead ones are
//               forgotten, live ones get their current size (ObjectSpace.memsize_of), class and age
//               in GCs; objects that have not survived a GC yet are left out; frame names resolved
//   GVL released  sort and write the profile (gzip, atomic rename) while other threads run and
//               allocate; their objects go into the recorder, not into this snapshot
//   ensure      whatever happened (an exception, a write error, Thread#raise), the snapshot is
//               released and the profiler is free for the next dump
//
// No lock of heaprec's is held across a call into Ruby: the recorder's locks are taken and released
// inside each recorder call, so an exception unwinding through the dump cannot leave one held.
#pragma once

#include <ruby.h>

namespace heaprec::ruby {

class HeapProfiler;

// Writes the profile to `path` (a String without NUL); raises SystemCallError when it cannot be
// written. `reason` (a schema reason, which outlives the dump: schema::kReasonApi, kReasonExit or
// kReasonInterval) becomes the profile's reason= comment, next to pid= (the writing process).
VALUE DumpProfile(HeapProfiler& profiler, VALUE path, const char* reason);

// Deletes a profiler that Heaprec.stop retired while this dump was using it (extension.cc).
void RetireStoppedProfiler(HeapProfiler* profiler);

// The child side of fork(): abandons a dump that another thread of the parent was running (its
// snapshot released, the profiler free for new dumps). Returns whether there was one.
bool AbandonDumpInChild(HeapProfiler& profiler);

// Test-only fault injection (Heaprec::Testing): a delay inside the GVL-released write phase, and
// a block called once in the middle of the next liveness pass (to raise, fork, interrupt...).
struct DumpTesting {
  double write_delay_seconds = 0;
  VALUE liveness_pass_hook = Qnil;  // registered with the GC by the extension
};
extern DumpTesting g_dump_testing;

}  // namespace heaprec::ruby
