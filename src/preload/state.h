// The process-wide state of the preload library that its parts share: settings, the recorder, the
// profiler's own memory, the sampling interval and the counters every profile reports. Defined in
// state.cc, constant-initialized: the first allocation hook may run before any dynamic initializer
// would have. The per-thread state is thread_state.h.
#pragma once

#include <time.h>

#include <atomic>
#include <cstdint>

#include "core/arena.h"
#include "core/heap_recorder.h"
#include "preload/control/settings.h"

namespace heaprec::preload {

// Non-null once the profiler is ready; the free() fast path reads it. Lock-free, signal-safe.
extern std::atomic<HeapRecorder*> g_recorder;

extern Settings g_settings;                    // read once at start-up, then constant
extern MmapArena* g_arena;                     // null until start-up succeeded
extern std::atomic<std::uint64_t> g_interval;  // the sampling interval now
extern std::atomic<std::uint64_t> g_unwind_failures;
extern std::atomic<std::uint64_t> g_truncated_stacks;
extern std::uint64_t g_start_time_ns;  // CLOCK_REALTIME at start-up
extern std::uint64_t
    g_process_start_ns;  // CLOCK_REALTIME when the process (not this program) began

std::uint64_t NowNs(clockid_t clock);

// The profiler's own memory, or null when it is not profiling. For the dlclose hook.
MemoryResource* ProfilerMemory();

}  // namespace heaprec::preload
