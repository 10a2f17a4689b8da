// Writing profiles from inside the profiled process: choosing the file, the comments every profile
// carries, and the one-at-a-time dump itself; and the peak-heap copy, taken as the live heap grows
// and written to disk (at most once per second, by the dump thread) so that a process killed with
// SIGKILL still leaves it. Everything here is async-signal-safe (see endings.h): the final dump may
// run in a signal handler.
#include "preload/dump/dump.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <new>

#include "core/appender.h"
#include "core/arena.h"
#include "core/gzip_file_sink.h"
#include "core/manifest_writer.h"
#include "core/profile_file.h"
#include "preload/attach/dormant.h"
#include "preload/dump/dump_thread.h"
#include "preload/messages.h"
#include "preload/objects/process_mappings.h"
#include "preload/state.h"
#include "preload/thread_state.h"
#include "preload/unwind/unwinder.h"
#include "schema/profile_schema.h"

extern "C" char* program_invocation_short_name;  // glibc: the program's base name, no allocation

namespace heaprec::preload {
namespace {

Mutex g_dump_mutex;
unsigned g_dump_sequence = 0;  // guarded by g_dump_mutex
// Written under g_dump_mutex; read without it by the peak writer, which must not start a write the
// process's exit could cut short (a killed write leaves its temporary file behind).
std::atomic<bool> g_final_dump_done{false};

const char* ReasonName(DumpReason reason) {
  switch (reason) {
    case DumpReason::kExit:
      return schema::kReasonExit;
    case DumpReason::kUnderscoreExit:
      return schema::kReasonUnderscoreExit;
    case DumpReason::kCrash:
      return schema::kReasonCrash;
    case DumpReason::kTerminated:
      return schema::kReasonTerminated;
    case DumpReason::kAbove:
      return schema::kReasonAbove;
    case DumpReason::kInterval:
      return schema::kReasonInterval;
    case DumpReason::kSignal:
      return schema::kReasonSignal;
    case DumpReason::kApi:
      return schema::kReasonApi;
    case DumpReason::kPeak:
      return schema::kReasonPeak;
    case DumpReason::kHttp:
      return schema::kReasonHttp;
  }
  return "unknown";
}

bool IsFinal(DumpReason reason) {
  return reason == DumpReason::kExit || reason == DumpReason::kUnderscoreExit ||
         reason == DumpReason::kCrash || reason == DumpReason::kTerminated;
}

// Existing files at a profile's name written since this process started are another program's of
// this process (before an exec) or another process's: never overwritten. See WriteOptions.
WriteOptions KeepingNewerFiles(char* written_path, std::size_t capacity) {
  WriteOptions options;
  options.replace = false;
  options.keep_since_ns = static_cast<long long>(g_process_start_ns);
  options.written_path = written_path;
  options.written_capacity = capacity;
  return options;
}

// The comments every profile carries, two of them so that pprof's header stays short: first what
// the profile is (the tool's version, the process, why it was written, how it was sampled and
// unwound), then the counters a user needs to judge it (how much was sampled, what was lost). Each
// field is NAME=VALUE with a schema field name, separated by spaces (analysis::CommentField reads
// them). Fixed storage: dumps never call malloc. A field that does not fit is left out (none
// comes close: the longest comment, every counter at 20 digits, is about 475 characters).
class ProfileComments {
 public:
  // Starts the next comment with `text`.
  void Begin(const char* text) {
    if (count_ == kCapacity) return;
    storage_[count_][0] = '\0';
    list_[count_] = storage_[count_];
    ++count_;
    Append(text);
  }
  void Add(const char* name, std::uint64_t value) {
    char digits[24];
    Appender number(digits, sizeof(digits));
    number.AddUnsigned(value, 1);
    number.Finish();  // always fits
    Append(name, "=", digits);
  }
  // NAME=VALUE, the value possibly in two parts ("signal", "SIG", "SEGV").
  void Add(const char* name, const char* value, const char* more = "") {
    Append(name, "=", value, more);
  }
  const char* const* list() const { return list_; }
  std::size_t count() const { return count_; }

 private:
  static constexpr std::size_t kCapacity = 2, kLength = 512;
  // Appends a field to the current comment, after a space unless it is the first.
  void Append(const char* a, const char* b = "", const char* c = "", const char* d = "") {
    if (count_ == 0) return;
    char* out = storage_[count_ - 1];
    std::size_t used = strlen(out);
    Appender text(out + used, kLength - used);
    if (used != 0) text.Add(" ");
    text.Add(a);
    text.Add(b);
    text.Add(c);
    text.Add(d);
    if (!text.Finish()) out[used] = '\0';
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
  unsigned sequence = IsFinal(reason) ? 0 : ++g_dump_sequence;
  return ExpandOutputTemplate(g_settings.output_template, getpid(), program_invocation_short_name,
                              static_cast<long long>(NowNs(CLOCK_REALTIME) / 1000000000ull),
                              sequence, target, capacity);
}

// Peak profiles written, and the time that took, for the final profile's comments: what the
// on-disk peak costs.
std::atomic<std::uint64_t> g_peak_writes{0};
std::atomic<std::uint64_t> g_peak_write_ns{0};

// Calls write(metadata) with the metadata of `snapshot`, taken at `taken_ns`: the process's
// mappings and the comments every profile carries. Returns write's result, or ENOMEM.
template <typename Write>
int WithMetadata(HeapSnapshot& snapshot, DumpReason reason, int signal_number,
                 std::uint64_t taken_ns, Write&& write) {
  snapshot.SortByStackAndSize();
  ProcessMappings mappings(*g_arena);
  if (!mappings.Read(snapshot)) return ENOMEM;
  const RecorderStats& stats = snapshot.stats();
  ProfileComments comments;
  comments.Begin("heaprec " HEAPREC_VERSION);
  comments.Add(schema::kPidField, static_cast<std::uint64_t>(getpid()));
  comments.Add(schema::kReasonField, ReasonName(reason));
  if (signal_number != 0 && sigabbrev_np(signal_number) != nullptr) {
    comments.Add(schema::kSignalField, "SIG", sigabbrev_np(signal_number));
  }
  comments.Add(schema::kSampleIntervalField, g_interval.load());
  comments.Add(schema::kUnwinderField, UnwinderName());
  comments.Begin("");
  comments.Add(schema::kSamplesField, stats.samples);
  comments.Add(schema::kLiveSamplesField, snapshot.object_count());
  comments.Add(schema::kDroppedField, stats.dropped);
  comments.Add(schema::kUnwindFailuresField, g_unwind_failures.load());
  comments.Add(schema::kTruncatedStacksField, g_truncated_stacks.load());
  comments.Add(schema::kMissedFreesField, stats.replaced);
  // The profiler's own footprint: what its arena mapped, plus the recorder's static tables.
  comments.Add(schema::kProfilerBytesField,
               g_arena->BytesMapped() + sizeof(HeapRecorder) + sizeof(MmapArena));
  if (UnwindCheckCounts check; GetUnwindCheckCounts(&check)) {
    comments.Add(schema::kUnwindChecksField, check.checked);
    comments.Add(schema::kUnwindMismatchesField, check.mismatched);
    comments.Add(schema::kUnwindHandoversField, check.handed_over);
  }
  if (std::uint64_t attaches = AttachCount(); attaches != 0) {
    comments.Add(schema::kAttachedField, attaches);
    comments.Add(schema::kAttachedAtField, LastAttachNs() / 1000000000ull);
  }
  if (IsFinal(reason)) {
    comments.Add(schema::kPeakWritesField, g_peak_writes.load());
    comments.Add(schema::kPeakWriteUsField, g_peak_write_ns.load() / 1000);
  }
  ProfileMetadata metadata = {g_interval.load(),
                              static_cast<std::int64_t>(taken_ns),
                              static_cast<std::int64_t>(taken_ns - g_start_time_ns),
                              mappings.mappings(),
                              mappings.count(),
                              comments.list(),
                              comments.count()};
  return write(metadata);
}

// Writes `snapshot`, taken at `taken_ns`, to `target` with the comments every profile carries.
int WriteSnapshot(HeapSnapshot& snapshot, DumpReason reason, int signal_number, const char* target,
                  std::uint64_t taken_ns, const WriteOptions& options) {
  return WithMetadata(snapshot, reason, signal_number, taken_ns,
                      [&](const ProfileMetadata& metadata) {
                        return WriteHeapProfileFile(target, snapshot, metadata, *g_arena, options);
                      });
}

// After a privilege drop: where profiles go that the new user may not write at their usual place.
char g_fallback_directory[PATH_MAX];  // "" until set, then constant (set before the drop)

// WriteSnapshot, and on a permission error the same name in the fallback directory.
int WriteWithFallback(HeapSnapshot& snapshot, DumpReason reason, int signal_number,
                      const char* target, std::uint64_t taken_ns, const WriteOptions& options) {
  int error = WriteSnapshot(snapshot, reason, signal_number, target, taken_ns, options);
  if ((error != EACCES && error != EPERM) || g_fallback_directory[0] == '\0') return error;
  const char* slash = strrchr(target, '/');
  char fallback[PATH_MAX];
  Appender path(fallback, sizeof(fallback));
  path.Add(g_fallback_directory);
  path.Add("/");
  path.Add(slash != nullptr ? slash + 1 : target);
  if (!path.Finish()) return error;
  return WriteSnapshot(snapshot, reason, signal_number, fallback, taken_ns, options);
}

// Writes a profile and reports it: in the manifest for `heaprec run`, and for a dump the user asked
// for with a signal, one line (unless quiet); a failure always gets one line.
int WriteAndReport(HeapSnapshot& snapshot, DumpReason reason, int signal_number, const char* target,
                   std::uint64_t taken_ns, WriteOptions options) {
  char written[PATH_MAX];
  options.written_path = written;
  options.written_capacity = sizeof(written);
  int error = WriteWithFallback(snapshot, reason, signal_number, target, taken_ns, options);
  if (error != 0) {
    const char* parts[] = {"heaprec: could not write profile '", target,
                           "': ", strerrordesc_np(error), "\n"};
    ReportMessage(parts, sizeof(parts) / sizeof(parts[0]));
    return error;
  }
  if (g_settings.manifest[0] != '\0') {
    AppendToManifest(g_settings.manifest, getpid(), ReasonName(reason), written);
  }
  if (reason == DumpReason::kSignal && !g_settings.quiet) {
    const char* parts[] = {"heaprec: wrote ", written, " (on signal)\n"};
    ReportMessage(parts, sizeof(parts) / sizeof(parts[0]));
  }
  return 0;
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

char g_peak_path[PATH_MAX];             // guarded by g_peak_lock; "" until the first write
std::int64_t g_peak_written_bytes = 0;  // guarded by g_peak_lock: what the file on disk holds

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
      if (!ChooseTarget(DumpReason::kExit, nullptr, final_name, sizeof(final_name))) return;
      final_path = final_name;
    }
    if (!PeakPath(final_path, target, sizeof(target))) return;
    options = KeepingNewerFiles(nullptr, 0);
  }
  char written[PATH_MAX];
  options.written_path = written;
  options.written_capacity = sizeof(written);
  std::uint64_t started = NowNs(CLOCK_MONOTONIC);
  std::size_t in_use_before = g_arena->BytesInUse();
  g_arena->ResetHighWater();
  int error = WriteWithFallback(*g_peak, DumpReason::kPeak, 0, target, g_peak_time_ns, options);
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

// The line that the live heap must cross for the next HEAPREC_DUMP_ABOVE profile.
std::atomic<std::int64_t> g_next_above{0};

}  // namespace

namespace {

int DumpAs(DumpReason reason, const char* path, int signal_number) {
  HeapRecorder* recorder = g_recorder.load(std::memory_order_acquire);
  if (recorder == nullptr) return ENOSYS;
  HookGuard guard;
  MutexLock lock(g_dump_mutex);
  if (g_final_dump_done.load() && reason != DumpReason::kApi) return 0;
  char target[PATH_MAX];
  if (!ChooseTarget(reason, path, target, sizeof(target))) return ENAMETOOLONG;
  if (IsFinal(reason)) g_final_dump_done.store(true);
  HeapSnapshot snapshot;
  // Only the API's explicit path may replace a file; named by the template, nothing is lost.
  WriteOptions options = path != nullptr ? WriteOptions() : KeepingNewerFiles(nullptr, 0);
  char written[PATH_MAX] = {};
  options.written_path = written;
  options.written_capacity = sizeof(written);
  int error = snapshot.Take(*recorder) ? WriteAndReport(snapshot, reason, signal_number, target,
                                                        NowNs(CLOCK_REALTIME), options)
                                       : ENOMEM;
  if (IsFinal(reason)) {
    MutexLock peak_lock(g_peak_lock);
    WritePeakLocked(written[0] != '\0' ? written : target);
  }
  return error;
}

}  // namespace

int Dump(DumpReason reason, const char* path) { return DumpAs(reason, path, 0); }

int StreamProfile(ByteSink& body) {
  HeapRecorder* recorder = g_recorder.load(std::memory_order_acquire);
  if (recorder == nullptr) return ENOSYS;
  HookGuard guard;
  HeapSnapshot snapshot;
  // The copy is taken under the dump lock, as every dump's; encoding and sending happen without
  // it, so a client that reads slowly or not at all holds nothing the program or its dumps need.
  bool taken;
  {
    MutexLock lock(g_dump_mutex);
    taken = snapshot.Take(*recorder);
  }
  if (!taken) return ENOMEM;
  return WithMetadata(
      snapshot, DumpReason::kHttp, 0, NowNs(CLOCK_REALTIME), [&](const ProfileMetadata& metadata) {
        errno = 0;
        GzipFileSink sink(body, *g_arena);
        bool ok =
            sink.ok() && EncodeHeapProfile(snapshot, metadata, *g_arena, sink) && sink.Finish();
        return ok ? 0 : (errno != 0 ? errno : EIO);
      });
}

void SetFallbackDirectory(const char* directory) {
  std::size_t length = strlen(directory);
  if (length < sizeof(g_fallback_directory)) memcpy(g_fallback_directory, directory, length + 1);
}

int DumpFinal(DumpReason reason, int signal_number) {
  return DumpAs(reason, nullptr, signal_number);
}

void WritePeakProfile() {
  if (g_recorder.load(std::memory_order_acquire) == nullptr) return;
  HookGuard guard;
  MutexLock lock(g_peak_lock);
  // Once the final profile is written the process is ending, and the final dump has brought the
  // peak file up to date under this lock: a write begun now (threads still allocating while exit
  // runs) would be cut short by the exit and leave its temporary file behind. A write begun before
  // holds the lock, so the final dump waits for it to finish.
  if (g_final_dump_done.load()) return;
  WritePeakLocked(nullptr);
}

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

void LockDumps() {
  g_dump_mutex.Lock();
  g_peak_lock.Lock();
}
void UnlockDumps() {
  g_peak_lock.Unlock();
  g_dump_mutex.Unlock();
}
// The child starts its own peak: the parent's copy says nothing about the child's heap.
void ResetDumpsAfterForkInChild() {
  g_dump_mutex.ResetAfterFork();
  g_peak_lock.ResetAfterFork();
  g_dump_sequence = 0;
  g_final_dump_done.store(false);
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
