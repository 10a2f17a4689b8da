// The process-wide state of the preload library that its parts share (state.h, thread_state.h),
// defined in one place. Everything here is constant-initialized: the first allocation hook may run
// before any dynamic initializer would have.
#include "preload/state.h"

#include <time.h>

#include "core/arena.h"
#include "core/sampler.h"
#include "preload/control/settings.h"
#include "preload/thread_state.h"

namespace heaprec::preload {

__thread ThreadState t_state __attribute__((tls_model("initial-exec")));
std::atomic<HeapRecorder*> g_recorder{nullptr};
MmapArena* g_arena = nullptr;
Settings g_settings;
std::atomic<std::uint64_t> g_interval{Sampler::kDefaultInterval};
std::atomic<std::uint64_t> g_unwind_failures{0};
std::atomic<std::uint64_t> g_truncated_stacks{0};
std::uint64_t g_start_time_ns = 0;
std::uint64_t g_process_start_ns = 0;

std::uint64_t NowNs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

MemoryResource* ProfilerMemory() {
  return g_recorder.load(std::memory_order_acquire) != nullptr ? g_arena : nullptr;
}

}  // namespace heaprec::preload
