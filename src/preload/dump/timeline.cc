#include "preload/dump/timeline.h"

#include <sched.h>

#include <atomic>

#include "core/mutex.h"
#include "preload/dump/timeline_points.h"
#include "preload/process/own_process.h"
#include "preload/process/process_memory.h"
#include "preload/state.h"

namespace heaprec::preload {
namespace {

// pprof readers keep long strings (Pyroscope cuts a string at 65,535 bytes, keeping its end): the
// comment stays below, points merged further if need be.
constexpr std::size_t kMaxText = 60000;

Mutex g_lock;                              // appending points; a profile's reading of them
TimelinePoints g_points;                   // under g_lock; in .bss, its pages touched as it fills
std::atomic<std::uint64_t> g_start_ns{0};  // 0: not started
std::atomic<std::uint64_t> g_next_point_ns{0};
std::atomic<std::int64_t> g_max_since_point{0};  // the highest estimate since the last point
std::atomic<std::int64_t> g_peak{0};             // the highest estimate, and when
std::atomic<std::uint64_t> g_peak_ns{0};

// Raises `value` to `candidate` if it is higher: a relaxed compare-and-swap only then.
bool RaiseTo(std::atomic<std::int64_t>& value, std::int64_t candidate) {
  std::int64_t seen = value.load(std::memory_order_relaxed);
  while (candidate > seen) {
    if (value.compare_exchange_weak(seen, candidate, std::memory_order_relaxed)) return true;
  }
  return false;
}

std::uint64_t MsSinceStart(std::uint64_t now_ns) {
  const std::uint64_t start = g_start_ns.load(std::memory_order_relaxed);
  return now_ns > start ? (now_ns - start) / 1000000 : 0;
}

// A point for now, with the resident set `rss` the caller read; `starts_span`: the highest
// estimate starts again from it (a point kept, not the last point a profile adds).
TimelinePoint PointNow(HeapRecorder& recorder, std::uint64_t now_ns, bool starts_span,
                       std::uint64_t rss) {
  const std::int64_t live = recorder.LiveBytesEstimate();
  std::int64_t max = starts_span ? g_max_since_point.exchange(live, std::memory_order_relaxed)
                                 : g_max_since_point.load(std::memory_order_relaxed);
  if (live > max) max = live;
  return {MsSinceStart(now_ns), live, max, rss, recorder.AllocatedBytesEstimate()};
}

}  // namespace

void StartTimeline(std::uint64_t now_ns) {
  g_lock.ResetAfterFork();
  g_points.Clear();
  g_max_since_point.store(0, std::memory_order_relaxed);
  g_peak.store(0, std::memory_order_relaxed);
  g_peak_ns.store(now_ns, std::memory_order_relaxed);
  g_next_point_ns.store(now_ns, std::memory_order_relaxed);
  g_start_ns.store(now_ns, std::memory_order_relaxed);
}

void NoteTimeline(HeapRecorder& recorder, std::uint64_t now_ns) {
  if (g_start_ns.load(std::memory_order_relaxed) == 0) return;
  const std::int64_t live = recorder.LiveBytesEstimate();
  RaiseTo(g_max_since_point, live);
  if (RaiseTo(g_peak, live)) g_peak_ns.store(now_ns, std::memory_order_relaxed);
  if (now_ns < g_next_point_ns.load(std::memory_order_relaxed)) return;
  // A child of vfork() shares this memory until it execs, and its resident set is not the
  // program's: it adds no point. Asked only here, every 100 ms or more: the question is a system
  // call (getpid), which on every sampled allocation and free was most of exact mode's cost.
  if (!InOwnProcess() || !g_lock.TryLock()) return;
  if (now_ns >= g_next_point_ns.load(std::memory_order_relaxed)) {
    std::uint64_t rss = 0, file_backed = 0;
    ReadResidentBytes(&rss, &file_backed);
    g_points.Append(PointNow(recorder, now_ns, true, rss));
    g_next_point_ns.store(now_ns + g_points.spacing_ms() * 1000000, std::memory_order_relaxed);
  }
  g_lock.Unlock();
}

TimelineComment::TimelineComment(HeapRecorder* recorder, std::uint64_t now_ns, std::uint64_t rss,
                                 MemoryResource& memory)
    : memory_(memory) {
  if (recorder == nullptr || g_start_ns.load(std::memory_order_relaxed) == 0) return;
  // The appending thread holds the lock for microseconds; a profile written from a signal handler
  // that interrupted it (a crash inside the append) must not wait for ever: about 10 ms, then no
  // timeline.
  bool locked = false;
  for (int tries = 0; tries < 1000 && !(locked = g_lock.TryLock()); ++tries) sched_yield();
  if (!locked) return;
  text_ = static_cast<char*>(memory_.Allocate(kMaxText));
  if (text_ != nullptr) {
    const TimelineHeader header = {g_start_ns.load(std::memory_order_relaxed),
                                   g_interval.load(std::memory_order_relaxed),
                                   MsSinceStart(g_peak_ns.load(std::memory_order_relaxed)),
                                   g_peak.load(std::memory_order_relaxed)};
    if (!g_points.Format(header, PointNow(*recorder, now_ns, false, rss), text_, kMaxText)) {
      memory_.Deallocate(text_, kMaxText);
      text_ = nullptr;
    }
  }
  g_lock.Unlock();
}

TimelineComment::~TimelineComment() {
  if (text_ != nullptr) memory_.Deallocate(text_, kMaxText);
}

}  // namespace heaprec::preload
