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
#include "preload/record/heap_record.h"
#include "preload/state.h"
#include "preload/thread_state.h"
#include "schema/profile_schema.h"

namespace heaprec::preload {
namespace {

constexpr std::int64_t kPeakFloorBytes = 64 * 1024;  // below this a "peak" is start-up noise

// A copy of the live set and what it held.
struct PeakCopy {
  HeapSnapshot* snapshot = nullptr;
  std::int64_t bytes = 0;  // 0: nothing worth writing
  std::uint64_t time_ns = 0;
};

// Two copies, so that capturing never waits for a write: the newest capture, which allocating
// threads replace under g_capture_lock (held for the copy only, never for I/O), and the one being
// written, which the writer takes by swapping the two under g_capture_lock and then writes under
// g_write_lock alone. A write that takes 200 ms on a loaded machine used to hold the only lock, and
// every capture in those 200 ms was skipped: a burst to the true peak went unrecorded.
// Lock order: g_write_lock, then g_capture_lock (both after the dumps' lock, dump.h).
Mutex g_capture_lock;
Mutex g_write_lock;
alignas(HeapSnapshot) unsigned char g_snapshot_storage[2][sizeof(HeapSnapshot)];
PeakCopy g_captured;  // guarded by g_capture_lock
PeakCopy g_writing;   // guarded by g_write_lock
std::atomic<std::int64_t> g_peak_threshold{kPeakFloorBytes};

char g_peak_path[PATH_MAX];             // guarded by g_write_lock; "" until the first write
std::int64_t g_peak_written_bytes = 0;  // guarded by g_write_lock: what the file on disk holds

std::atomic<std::uint64_t> g_peak_writes{0};
std::atomic<std::uint64_t> g_peak_write_ns{0};
std::atomic<std::uint64_t> g_peak_captures{0};  // updated under g_capture_lock
std::atomic<std::uint64_t> g_peak_capture_ns{0};

// The line that the live heap must cross for the next HEAPREC_DUMP_ABOVE profile.
std::atomic<std::int64_t> g_next_above{0};

// "dir/name.123.pb.gz" -> "dir/name.123.peak.pb.gz" (or ".peak" appended).
bool PeakPath(const char* final_path, char* out, std::size_t capacity) {
  return InsertBeforeExtension(final_path, schema::kPeakInfix, out, capacity);
}

// The final dump of a process dying for want of memory (a failed malloc's abort, RLIMIT_AS) must
// not need new mappings: the arena keeps a reserve for it, sized from what writing the peak copy
// took (`written_bytes`) plus a fresh snapshot of the same size, twice over for growth since. The
// snapshots are by site, so this is the profile's size, not the heap's.
void ReserveForTheFinalDump(const HeapSnapshot& written, std::size_t written_bytes) {
  constexpr std::size_t kSlack = 1 << 20;
  g_arena->EnsureReserve(2 * (written_bytes + written.bytes()) + kSlack);
}

// Takes the newest capture for writing, if it is newer than what the file holds: the two copies
// change places, and the capture slot keeps the older one until the next capture replaces it.
// Called with g_write_lock and g_capture_lock held.
bool TakeNewestCaptureLocked() {
  if (g_captured.bytes == 0) return false;
  // The second buffer comes to life with the first swap, here, under both locks: g_writing is
  // touched by the writer only.
  if (g_writing.snapshot == nullptr)
    g_writing.snapshot = new (g_snapshot_storage[1]) HeapSnapshot();
  PeakCopy newest = g_captured;
  g_captured = g_writing;
  g_captured.bytes = 0;  // already written, or never captured
  g_writing = newest;
  return true;
}

// Writes the newest capture if the file does not hold it yet. The first write picks the name (next
// to `final_path`, or to the final profile's name from the template) and keeps it; later ones
// replace that file atomically. Called with g_write_lock held, and without g_capture_lock (unless
// `capture_lock_held`: exec), so that allocating threads go on capturing while the file is written.
void WritePeakLocked(const char* final_path, bool capture_lock_held = false) {
  if (capture_lock_held) {
    TakeNewestCaptureLocked();
  } else {
    MutexLock lock(g_capture_lock);
    TakeNewestCaptureLocked();
  }
  if (g_writing.snapshot == nullptr || g_writing.bytes == 0 ||
      g_writing.bytes == g_peak_written_bytes) {
    return;
  }
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
  int error =
      WriteProfile(*g_writing.snapshot, DumpReason::kPeak, 0, target, g_writing.time_ns, options);
  g_peak_write_ns.fetch_add(NowNs(CLOCK_MONOTONIC) - started);
  ReserveForTheFinalDump(*g_writing.snapshot,
                         g_arena->HighWater() - std::min(in_use_before, g_arena->HighWater()));
  if (error != 0) return;
  g_peak_writes.fetch_add(1);
  g_peak_written_bytes = g_writing.bytes;
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
  // One thread copies; the others skip (a copy a moment later is as good). The lock is held for
  // the copy only: a peak write in progress does not hold it.
  if (live <= g_peak_threshold.load(std::memory_order_relaxed) || !g_capture_lock.TryLock()) return;
  live = recorder.LiveBytesEstimate();
  bool captured = false;
  if (live > g_peak_threshold.load(std::memory_order_relaxed)) {
    std::uint64_t started = NowNs(CLOCK_MONOTONIC);
    if (g_captured.snapshot == nullptr)
      g_captured.snapshot = new (g_snapshot_storage[0]) HeapSnapshot();
    if (g_captured.snapshot->Take(recorder, SnapshotGrouping::kBySite)) {
      g_captured.bytes = live;
      g_captured.time_ns = NowNs(CLOCK_REALTIME);
      RecordPeakCopy(*g_captured.snapshot, live, g_captured.time_ns);
      g_peak_threshold.store(live + live / 10, std::memory_order_relaxed);
      captured = true;
    } else {
      g_captured.bytes = 0;  // out of memory: the copy is gone, nothing new to write
    }
    g_peak_captures.fetch_add(1, std::memory_order_relaxed);
    g_peak_capture_ns.fetch_add(NowNs(CLOCK_MONOTONIC) - started, std::memory_order_relaxed);
  }
  g_capture_lock.Unlock();
  if (captured) RequestPeakWrite();
}

void WritePeakProfile() {
  if (g_recorder.load(std::memory_order_acquire) == nullptr) return;
  HookGuard guard;
  MutexLock lock(g_write_lock);
  // Once the final profile is written the process is ending, and the final dump has brought the
  // peak file up to date under this lock: a write begun now (threads still allocating while exit
  // runs) would be cut short by the exit and leave its temporary file behind. A write begun before
  // holds the lock, so the final dump waits for it to finish.
  if (FinalDumpDone()) return;
  WritePeakLocked(nullptr);
}

void WritePeakNextTo(const char* final_path) {
  MutexLock lock(g_write_lock);
  WritePeakLocked(final_path);
}

void WritePeakBeforeExec() { WritePeakLocked(nullptr, /*capture_lock_held=*/true); }

void KeepPeakInHeapRecord() {
  MutexLock lock(g_capture_lock);
  if (g_captured.bytes != 0)
    RecordPeakCopy(*g_captured.snapshot, g_captured.bytes, g_captured.time_ns);
}

PeakWriteCosts PeakWritesSoFar() {
  return {g_peak_writes.load(), g_peak_write_ns.load(), g_peak_captures.load(),
          g_peak_capture_ns.load()};
}

void LockPeak() {
  g_write_lock.Lock();
  g_capture_lock.Lock();
}

void UnlockPeak() {
  g_capture_lock.Unlock();
  g_write_lock.Unlock();
}

void ResetPeakAfterForkInChild() {
  g_write_lock.ResetAfterFork();
  g_capture_lock.ResetAfterFork();
  for (PeakCopy* copy : {&g_captured, &g_writing}) {
    if (copy->snapshot != nullptr) copy->snapshot->Release();
    copy->bytes = 0;
  }
  g_peak_written_bytes = 0;
  g_peak_writes.store(0);
  g_peak_write_ns.store(0);
  g_peak_captures.store(0);
  g_peak_capture_ns.store(0);
  g_peak_path[0] = '\0';
  g_next_above.store(0, std::memory_order_relaxed);
  g_peak_threshold.store(kPeakFloorBytes, std::memory_order_relaxed);
}

}  // namespace heaprec::preload
