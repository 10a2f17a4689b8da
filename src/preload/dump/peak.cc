#include "preload/dump/peak.h"

#include <limits.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <new>

#include "core/arena.h"
#include "core/manifest_writer.h"
#include "core/mutex.h"
#include "core/profile_file.h"
#include "preload/control/settings.h"
#include "preload/dump/dump.h"
#include "preload/dump/dump_thread.h"
#include "preload/dump/profile_writer.h"
#include "preload/state.h"
#include "preload/thread_state.h"
#include "schema/profile_schema.h"

namespace heaprec::preload {
namespace {

constexpr std::int64_t kPeakFloorBytes = 64 * 1024;  // below this a "peak" is start-up noise
Mutex g_peak_lock;
alignas(HeapSnapshot) unsigned char g_peak_storage[sizeof(HeapSnapshot)];
HeapSnapshot* g_peak = nullptr;  // guarded by g_peak_lock
std::atomic<std::int64_t> g_peak_threshold{kPeakFloorBytes};
std::int64_t g_peak_bytes = 0;     // guarded by g_peak_lock
std::uint64_t g_peak_time_ns = 0;  // guarded by g_peak_lock

char g_peak_path[PATH_MAX];             // guarded by g_peak_lock; "" until the first write
std::int64_t g_peak_written_bytes = 0;  // guarded by g_peak_lock: what the file on disk holds

std::atomic<std::uint64_t> g_peak_writes{0};
std::atomic<std::uint64_t> g_peak_write_ns{0};

// The line that the live heap must cross for the next HEAPREC_DUMP_ABOVE profile.
std::atomic<std::int64_t> g_next_above{0};

// "dir/name.123.pb.gz" -> "dir/name.123.peak.pb.gz" (or ".peak" appended).
bool PeakPath(const char* final_path, char* out, std::size_t capacity) {
  return InsertBeforeExtension(final_path, schema::kPeakInfix, out, capacity);
}

// The final dump of a process dying for want of memory (a failed malloc's abort, RLIMIT_AS) must
// not need new mappings: the arena keeps a reserve for it, sized from what writing the peak copy
// took (`written_bytes`) plus a fresh snapshot of the same size, twice over for growth since.
void ReserveForTheFinalDump(std::size_t written_bytes) {
  constexpr std::size_t kSlack = 1 << 20;
  std::size_t snapshot_bytes = g_peak->object_count() * sizeof(HeapSnapshot::Object) +
                               g_peak->history_count() * sizeof(AllocationTotals);
  g_arena->EnsureReserve(2 * (written_bytes + snapshot_bytes) + kSlack);
}

// Writes the peak copy if the file does not hold it yet. The first write picks the name (next to
// `final_path`, or to the final profile's name from the template) and keeps it; later ones replace
// that file atomically. Called with g_peak_lock held.
void WritePeakLocked(const char* final_path) {
  if (g_peak == nullptr || g_peak_bytes == 0 || g_peak_bytes == g_peak_written_bytes) return;
  char target[PATH_MAX];
  WriteOptions options;  // replace the earlier version of this process's own peak profile
  if (g_peak_path[0] != '\0') {
    memcpy(target, g_peak_path, strlen(g_peak_path) + 1);
  } else {
    char final_name[PATH_MAX];
    if (final_path == nullptr) {
      if (!ExpandProfileName(0, final_name, sizeof(final_name))) return;
      final_path = final_name;
    }
    if (!PeakPath(final_path, target, sizeof(target))) return;
    options = KeepingNewerFiles();
  }
  char written[PATH_MAX];
  options.written_path = written;
  options.written_capacity = sizeof(written);
  std::uint64_t started = NowNs(CLOCK_MONOTONIC);
  std::size_t in_use_before = g_arena->BytesInUse();
  g_arena->ResetHighWater();
  int error = WriteProfile(*g_peak, DumpReason::kPeak, 0, target, g_peak_time_ns, options);
  g_peak_write_ns.fetch_add(NowNs(CLOCK_MONOTONIC) - started);
  ReserveForTheFinalDump(g_arena->HighWater() - std::min(in_use_before, g_arena->HighWater()));
  if (error != 0) return;
  g_peak_writes.fetch_add(1);
  g_peak_written_bytes = g_peak_bytes;
  memcpy(g_peak_path, written, strlen(written) + 1);
  if (g_settings.manifest[0] != '\0') {
    AppendToManifest(g_settings.manifest, getpid(), ReasonName(DumpReason::kPeak), written);
  }
}

}  // namespace

void MaybeCapturePeak(HeapRecorder& recorder) {
  std::int64_t live = recorder.LiveBytesEstimate();
  if (g_settings.dump_above != 0) {
    const auto step = static_cast<std::int64_t>(g_settings.dump_above);
    std::int64_t seen = g_next_above.load(std::memory_order_relaxed);
    std::int64_t line = seen != 0 ? seen : step;  // 0: no profile yet, the first line is N
    // One thread per crossing: the one whose exchange moves the line past the live heap.
    if (live >= line && g_next_above.compare_exchange_strong(seen, (live / step + 1) * step)) {
      RequestAboveDump();
    }
  }
  if (live <= g_peak_threshold.load(std::memory_order_relaxed) || !g_peak_lock.TryLock()) return;
  live = recorder.LiveBytesEstimate();
  bool captured = false;
  if (live > g_peak_threshold.load(std::memory_order_relaxed)) {
    if (g_peak == nullptr) g_peak = new (g_peak_storage) HeapSnapshot();
    if (g_peak->Take(recorder)) {
      g_peak_bytes = live;
      g_peak_time_ns = NowNs(CLOCK_REALTIME);
      g_peak_threshold.store(live + live / 10, std::memory_order_relaxed);
      captured = true;
    }
  }
  g_peak_lock.Unlock();
  if (captured) RequestPeakWrite();
}

void WritePeakProfile() {
  if (g_recorder.load(std::memory_order_acquire) == nullptr) return;
  HookGuard guard;
  MutexLock lock(g_peak_lock);
  // Once the final profile is written the process is ending, and the final dump has brought the
  // peak file up to date under this lock: a write begun now (threads still allocating while exit
  // runs) would be cut short by the exit and leave its temporary file behind. A write begun before
  // holds the lock, so the final dump waits for it to finish.
  if (FinalDumpDone()) return;
  WritePeakLocked(nullptr);
}

void WritePeakNextTo(const char* final_path) {
  MutexLock lock(g_peak_lock);
  WritePeakLocked(final_path);
}

PeakWriteCosts PeakWritesSoFar() { return {g_peak_writes.load(), g_peak_write_ns.load()}; }

void LockPeak() { g_peak_lock.Lock(); }
void UnlockPeak() { g_peak_lock.Unlock(); }

void ResetPeakAfterForkInChild() {
  g_peak_lock.ResetAfterFork();
  if (g_peak != nullptr) g_peak->Release();
  g_peak_bytes = 0;
  g_peak_written_bytes = 0;
  g_peak_writes.store(0);
  g_peak_write_ns.store(0);
  g_peak_path[0] = '\0';
  g_next_above.store(0, std::memory_order_relaxed);
  g_peak_threshold.store(kPeakFloorBytes, std::memory_order_relaxed);
}

}  // namespace heaprec::preload
