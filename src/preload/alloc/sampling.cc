// Sampling: the switch and the interval (IsActive, SetSampling and SetSampleInterval, for the
// public API and start-up), and the slow side of each thread's countdown (DrawSample): seeding a
// thread's generator on its first allocation, drawing the next point after a sample, and parking
// the countdown while sampling is off. Why it is split this way: the countdown's fast side must
// stay a subtraction and a branch inlined into malloc (hooks.cc), so everything that needs the
// settings, the recorder or the generator happens here, once per expiry.
#include "preload/alloc/sampling.h"

#include <time.h>

#include <atomic>

#include "core/sampler.h"
#include "preload/state.h"
#include "preload/thread_state.h"

namespace heaprec::preload {
namespace {

// While the profiler is off (not yet started, stopped, or disabled), threads come back to the slow
// path after this many bytes to notice when it is switched on.
constexpr std::int64_t kInactiveRecheckBytes = 1 << 20;

std::atomic<bool> g_sampling{false};
std::atomic<std::uint64_t> g_thread_seeds{0};

void SeedThread(ThreadState& t) {
  std::uint64_t ordinal = g_thread_seeds.fetch_add(1, std::memory_order_relaxed);
  std::uint64_t seed =
      g_settings.seed != 0
          ? g_settings.seed * 0x9e3779b97f4a7c15ULL + ordinal
          : NowNs(CLOCK_MONOTONIC) ^ reinterpret_cast<std::uintptr_t>(&t) ^ (ordinal << 32);
  Sampler::Seed(t.sampler, seed, g_interval.load(std::memory_order_relaxed));
  t.lane = static_cast<std::uint32_t>(ordinal);
  t.seeded = true;
}

}  // namespace

std::uint64_t DrawSample(std::size_t size) {
  ThreadState& t = t_state;
  if (t.in_hook) {
    // A sample point inside heaprec's own allocations: draw a new point rather than moving this one
    // to the program's next allocation, which would bias the profile toward whatever comes next.
    if (!t.seeded) SeedThread(t);
    Sampler::DrawNextPoint(t.sampler, g_interval.load(std::memory_order_relaxed));
    return 0;
  }
  HeapRecorder* recorder = g_recorder.load(std::memory_order_acquire);
  if (recorder == nullptr || !g_sampling.load(std::memory_order_relaxed)) {
    t.sampler.bytes_until_sample = kInactiveRecheckBytes;
    t.seeded = false;  // reseed when sampling starts, so the first point is a fresh draw
    return 0;
  }
  if (!t.seeded) {
    // First allocation of this thread (or since sampling resumed): draw the first point, then
    // account this allocation against it.
    SeedThread(t);
    if (!Sampler::Account(t.sampler, size)) return 0;
  }
  std::uint64_t interval = g_interval.load(std::memory_order_relaxed);
  Sampler::DrawNextPoint(t.sampler, interval);
  return interval;
}

bool IsActive() {
  return g_recorder.load(std::memory_order_acquire) != nullptr &&
         g_sampling.load(std::memory_order_relaxed);
}

void SetSampling(bool on) {
  g_sampling.store(on && g_recorder.load() != nullptr, std::memory_order_relaxed);
  // This thread re-enters the slow path on its next allocation and draws a fresh first point. Other
  // threads notice within kInactiveRecheckBytes of allocation.
  t_state.sampler.bytes_until_sample = 0;
  t_state.seeded = false;
}

void SetSampleInterval(std::uint64_t bytes) {
  g_interval.store(bytes == 0 ? 1 : bytes, std::memory_order_relaxed);
}

bool SamplesEveryAllocation() { return g_interval.load(std::memory_order_relaxed) == 1; }

void TurnSamplingOff() { g_sampling.store(false); }

}  // namespace heaprec::preload
