// Writing profiles from inside the profiled process: choosing the file, the comments every profile
// carries, and the one-at-a-time dump itself; and the peak-heap copy, kept while the program runs
// and written next to the final profile at exit.
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <new>

#include "core/arena.h"
#include "preload/process_mappings.h"
#include "core/profile_output.h"
#include "preload/profiler.h"
#include "preload/profiler_state.h"
#include "preload/thread_state.h"

extern "C" char* program_invocation_short_name;  // glibc: the program's base name, no allocation

namespace heaprec::preload {
namespace {

Mutex g_dump_mutex;
unsigned g_dump_sequence = 0;    // guarded by g_dump_mutex
bool g_final_dump_done = false;  // guarded by g_dump_mutex

const char* ReasonName(DumpReason reason) {
  switch (reason) {
    case DumpReason::kExit:
      return "exit";
    case DumpReason::kInterval:
      return "interval";
    case DumpReason::kSignal:
      return "signal";
    case DumpReason::kApi:
      return "api";
    case DumpReason::kPeak:
      return "peak";
  }
  return "unknown";
}

// The comments every profile carries: the tool's version and the counters a user needs to judge
// the profile (how much was sampled, what was lost). Fixed storage: dumps never call malloc.
class ProfileComments {
 public:
  void Add(const char* name, std::uint64_t value) {
    char digits[24];
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + value % 10);
      value /= 10;
    } while (value != 0);
    char* out = Next();
    std::size_t length = strlen(name);
    if (out == nullptr || length + 1 + static_cast<std::size_t>(n) + 1 > kLength) return;
    memcpy(out, name, length);
    out[length++] = '=';
    while (n > 0) out[length++] = digits[--n];
    out[length] = '\0';
  }
  void AddText(const char* first, const char* second = "") {
    char* out = Next();
    if (out == nullptr || strlen(first) + strlen(second) + 1 > kLength) return;
    strcpy(out, first);
    strcat(out, second);
  }
  const char* const* list() const { return list_; }
  std::size_t count() const { return count_; }

 private:
  static constexpr std::size_t kCapacity = 16, kLength = 96;
  char* Next() {
    if (count_ == kCapacity) return nullptr;
    storage_[count_][0] = '\0';
    list_[count_] = storage_[count_];
    return storage_[count_++];
  }
  char storage_[kCapacity][kLength];
  const char* list_[kCapacity];
  std::size_t count_ = 0;
};

// Where a dump goes: the caller's path, or the next name from the output template.
bool ChooseTarget(DumpReason reason, const char* path, char* target, std::size_t capacity) {
  if (path != nullptr) {
    std::size_t length = strlen(path);
    if (length == 0 || length >= capacity) return false;
    memcpy(target, path, length + 1);
    return true;
  }
  unsigned sequence = reason == DumpReason::kExit ? 0 : ++g_dump_sequence;
  return ExpandOutputTemplate(g_settings.output_template, getpid(), program_invocation_short_name,
                              static_cast<long long>(NowNs(CLOCK_REALTIME) / 1000000000ull),
                              sequence, target, capacity);
}

// Writes `snapshot`, taken at `taken_ns`, to `target` with the comments every profile carries.
int WriteSnapshot(HeapSnapshot& snapshot, DumpReason reason, const char* target,
                  std::uint64_t taken_ns) {
  ProcessMappings mappings(*g_arena);
  if (!mappings.Read()) return EIO;
  snapshot.SortByStackAndSize();
  const RecorderStats& stats = snapshot.stats();
  ProfileComments comments;
  comments.AddText("heaprec " HEAPREC_VERSION);
  comments.Add("sample_interval", g_interval.load());
  comments.Add("samples", stats.samples);
  comments.Add("live_samples", snapshot.object_count());
  comments.Add("dropped", stats.dropped);
  comments.Add("unwind_failures", g_unwind_failures.load());
  comments.Add("truncated_stacks", g_truncated_stacks.load());
  comments.Add("missed_frees", stats.replaced);
  // The profiler's own footprint: what its arena mapped, plus the recorder's static tables.
  comments.Add("profiler_bytes", g_arena->BytesMapped() + sizeof(HeapRecorder) + sizeof(MmapArena));
  comments.Add("pid", static_cast<std::uint64_t>(getpid()));
  comments.AddText("reason=", ReasonName(reason));
  ProfileMetadata metadata = {g_interval.load(),
                              static_cast<std::int64_t>(taken_ns),
                              static_cast<std::int64_t>(taken_ns - g_start_time_ns),
                              mappings.mappings(),
                              mappings.count(),
                              comments.list(),
                              comments.count()};
  return WriteProfileFile(target, snapshot, metadata, *g_arena);
}

// Writes a profile and reports it: in the manifest for `heaprec run`, or one line on stderr.
int WriteAndReport(HeapSnapshot& snapshot, DumpReason reason, const char* target,
                   std::uint64_t taken_ns) {
  int error = WriteSnapshot(snapshot, reason, target, taken_ns);
  if (error != 0) {
    const char* parts[] = {"heaprec: could not write profile '", target,
                           "': ", strerrordesc_np(error), "\n"};
    WriteStderr(parts, sizeof(parts) / sizeof(parts[0]));
  } else if (g_settings.manifest[0] != '\0') {
    AppendToManifest(g_settings.manifest, getpid(), ReasonName(reason), target);
  }
  return error;
}

// The peak heap. Each sampled allocation compares the live-bytes estimate with a threshold, 10%
// above the last captured peak; past it, one thread copies the live set (the others skip: a copy a
// moment later is as good). The copy's stacks stay pinned until it is replaced, which is free while
// the allocation history keeps every stack anyway. Captured copies underestimate the true peak by
// at most the 10% refresh margin.
constexpr std::int64_t kPeakFloorBytes = 64 * 1024;  // below this a "peak" is start-up noise
Mutex g_peak_lock;
alignas(HeapSnapshot) unsigned char g_peak_storage[sizeof(HeapSnapshot)];
HeapSnapshot* g_peak = nullptr;  // guarded by g_peak_lock
std::atomic<std::int64_t> g_peak_threshold{kPeakFloorBytes};
std::int64_t g_peak_bytes = 0;     // guarded by g_peak_lock
std::uint64_t g_peak_time_ns = 0;  // guarded by g_peak_lock

// "dir/name.123.pb.gz" -> "dir/name.123.peak.pb.gz" (or ".peak" appended).
bool PeakPath(const char* final_path, char* out, std::size_t capacity) {
  static constexpr char kExtension[] = ".pb.gz";
  std::size_t length = strlen(final_path), ext = sizeof(kExtension) - 1;
  std::size_t cut =
      length >= ext && strcmp(final_path + length - ext, kExtension) == 0 ? length - ext : length;
  if (length + sizeof(".peak") > capacity) return false;
  memcpy(out, final_path, cut);
  memcpy(out + cut, ".peak", 5);
  memcpy(out + cut + 5, final_path + cut, length - cut + 1);
  return true;
}

void WritePeakNextTo(const char* final_path) {
  MutexLock lock(g_peak_lock);
  if (g_peak == nullptr || g_peak_bytes == 0) return;
  char target[PATH_MAX];
  if (!PeakPath(final_path, target, sizeof(target))) return;
  WriteAndReport(*g_peak, DumpReason::kPeak, target, g_peak_time_ns);
}

}  // namespace

int Dump(DumpReason reason, const char* path) {
  HeapRecorder* recorder = g_recorder.load(std::memory_order_acquire);
  if (recorder == nullptr) return ENOSYS;
  HookGuard guard;
  MutexLock lock(g_dump_mutex);
  if (g_final_dump_done && reason != DumpReason::kApi) return 0;
  char target[PATH_MAX];
  if (!ChooseTarget(reason, path, target, sizeof(target))) return ENAMETOOLONG;
  if (reason == DumpReason::kExit) g_final_dump_done = true;
  HeapSnapshot snapshot;
  int error = snapshot.Take(*recorder)
                  ? WriteAndReport(snapshot, reason, target, NowNs(CLOCK_REALTIME))
                  : ENOMEM;
  if (reason == DumpReason::kExit) WritePeakNextTo(target);
  return error;
}

void MaybeCapturePeak(HeapRecorder& recorder) {
  std::int64_t live = recorder.LiveBytesEstimate();
  if (live <= g_peak_threshold.load(std::memory_order_relaxed) || !g_peak_lock.TryLock()) return;
  live = recorder.LiveBytesEstimate();
  if (live > g_peak_threshold.load(std::memory_order_relaxed)) {
    if (g_peak == nullptr) g_peak = new (g_peak_storage) HeapSnapshot();
    if (g_peak->Take(recorder)) {
      g_peak_bytes = live;
      g_peak_time_ns = NowNs(CLOCK_REALTIME);
      g_peak_threshold.store(live + live / 10, std::memory_order_relaxed);
    }
  }
  g_peak_lock.Unlock();
}

void LockDumpsForFork() {
  g_dump_mutex.Lock();
  g_peak_lock.Lock();
}
void UnlockDumpsAfterForkInParent() {
  g_peak_lock.Unlock();
  g_dump_mutex.Unlock();
}
// The child starts its own peak: the parent's copy says nothing about the child's heap.
void ResetDumpsAfterForkInChild() {
  g_dump_mutex.ResetAfterFork();
  g_peak_lock.ResetAfterFork();
  g_dump_sequence = 0;
  g_final_dump_done = false;
  if (g_peak != nullptr) g_peak->Release();
  g_peak_bytes = 0;
  g_peak_threshold.store(kPeakFloorBytes, std::memory_order_relaxed);
}

}  // namespace heaprec::preload
