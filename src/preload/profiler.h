// The profiler inside the profiled process, as the rest of the preload library calls it. hooks.cc
// holds the fast paths and calls in here only when a thread's countdown expires or a freed block
// may be sampled.
//
//   malloc ─fast─▶ __libc_malloc
//          └countdown expired─▶ AllocateSlow ─▶ real allocation, CaptureStack, HeapRecorder::Record
//   free   ─untagged─▶ __libc_free
//          └tagged (sampled)─▶ ReleaseSampled ─▶ HeapRecorder::Forget, then FreeTagged
//   (tagged_blocks.h; with an allocator other than glibc, the recorder's filter decides instead)
//
// Where each part lives:
//   recording.cc       the slow paths: AllocateSlow, PosixMemalignSlow, ReallocSlow, ReleaseSampled
//   sampling.cc        the sampling switch and interval (IsActive, SetSampling, SetSampleInterval)
//                      and an expired countdown's next point (sampling.h)
//   dumps.cc           Dump, DumpFinal, the peak copy (MaybeCapturePeak, WritePeakProfile)
//   startup.cc         the library's constructor and destructor (the exit profile)
//   fork_handlers.cc   the locks held across fork() (fork_handlers.h)
//   profiler_state.cc  the state the parts share (g_recorder here, profiler_state.h,
//   thread_state.h)
//
// Every function here says whether it may lock or allocate. None is async-signal-safe unless
// stated.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/byte_sink.h"
#include "core/heap_recorder.h"

namespace heaprec::preload {

// Non-null once the profiler is ready; the free() fast path reads it. Lock-free, signal-safe.
extern std::atomic<HeapRecorder*> g_recorder;

enum class AllocKind : std::uint8_t {
  kMalloc,
  kCalloc,
  kMemalign,
  kAlignedAlloc,
  kValloc,
  kPvalloc
};

// The countdown expired for an allocation of `size` bytes: performs the real allocation
// (`alignment` for kMemalign) and records it if it is sampled. May lock briefly; never calls malloc
// for itself.
void* AllocateSlow(AllocKind kind, std::size_t size, std::size_t alignment);

// posix_memalign's slow path (it returns its block through `out`).
int PosixMemalignSlow(void** out, std::size_t alignment, std::size_t size);

// realloc of a block that may be sampled, or whose countdown `expired`: the bookkeeping a moved or
// resized sampled block needs. May lock.
void* ReallocSlow(void* old_block, std::size_t size, bool expired);

// free() of a block that may be sampled (tagged, or the filter said maybe): forgets it, then gives
// it back to the allocator; or, when the thread is inside heaprec (see HookGuard), defers both
// until it leaves. Out of line, so that free()'s fast path needs no stack frame. May lock.
void ReleaseSampled(void* block);

// operator new's failure path (new_failure.cc): new-handler loop, then std::bad_alloc or null.
void* HandleNewFailure(std::size_t size, std::size_t alignment, bool nothrow);

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
// value. Takes the dump lock; allocates only from the profiler's arena, never calls malloc:
// async-signal-safe unless the calling thread is inside heaprec (holding its locks).
int Dump(DumpReason reason, const char* path);

// A fresh profile, gzipped, into `body` (the HTTP endpoint's response). The snapshot is taken under
// the dump lock, then encoded and written without any of heaprec's locks held. Returns 0 or an
// errno value. Allocates only from the profiler's arena.
int StreamProfile(ByteSink& body);

// The process's final profile (once; later calls do nothing), with the ending signal's name in its
// comments when `signal_number` is not 0; then the peak profile next to it. Like Dump.
int DumpFinal(DumpReason reason, int signal_number);

// Where profiles go that cannot be written at their usual place after the process dropped its
// privileges (identity_hooks.cc): same file name, in this directory.
void SetFallbackDirectory(const char* directory);

// Writes the peak copy to disk if the file does not hold it yet (the dump thread).
void WritePeakProfile();

// The profiler's own memory, or null when it is not profiling. For the dlclose hook.
MemoryResource* ProfilerMemory();

// After a sampled allocation: copies the live set if the live-bytes estimate passed 1.1x the last
// captured peak and asks the dump thread to write it; asks for a HEAPREC_DUMP_ABOVE profile when
// the estimate crossed the next line (dumps.cc). May lock (try-lock only for the copy); allocates
// from the arena.
void MaybeCapturePeak(HeapRecorder& recorder);

// Control for the public API.
bool IsActive();
void SetSampling(bool on);
void SetSampleInterval(std::uint64_t bytes);

// Read by the dump thread.
std::uint64_t DumpIntervalMs();
int DumpSignal();

}  // namespace heaprec::preload
