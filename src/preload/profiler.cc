#include "preload/profiler.h"

#include <alloca.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <new>

#include "core/arena.h"
#include "core/profile_file.h"
#include "core/sampler.h"
#include "preload/dump_thread.h"
#include "preload/endings.h"
#include "preload/identity.h"
#include "preload/loaded_objects.h"
#include "preload/profiler_state.h"
#include "preload/real_allocator.h"
#include "preload/settings.h"
#include "preload/signal_table.h"
#include "preload/tagged_blocks.h"
#include "preload/thread_state.h"
#include "preload/unloaded_libraries.h"
#include "preload/unwinder.h"

extern "C" char* program_invocation_short_name;  // glibc: the program's base name, no allocation

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

namespace {

// While the profiler is off (not yet started, stopped, or disabled), threads come back to the slow
// path after this many bytes to notice when it is switched on.
constexpr std::int64_t kInactiveRecheckBytes = 1 << 20;

// Placement storage: these must not have dynamic initializers, which could run after the first
// allocation hook already used them.
alignas(MmapArena) unsigned char g_arena_storage[sizeof(MmapArena)];
alignas(HeapRecorder) unsigned char g_recorder_storage[sizeof(HeapRecorder)];

std::atomic<bool> g_sampling{false};
std::atomic<std::uint64_t> g_thread_seeds{0};

void SeedThread(ThreadState& t) {
  std::uint64_t ordinal = g_thread_seeds.fetch_add(1, std::memory_order_relaxed);
  std::uint64_t seed =
      g_settings.seed != 0
          ? g_settings.seed * 0x9e3779b97f4a7c15ULL + ordinal
          : NowNs(CLOCK_MONOTONIC) ^ reinterpret_cast<std::uintptr_t>(&t) ^ (ordinal << 32);
  Sampler::Seed(t.sampler, seed, g_interval.load(std::memory_order_relaxed));
  t.seeded = true;
}

void Record(HeapRecorder& recorder, void* block, std::size_t size, std::uint64_t interval) {
  const std::uint32_t max_depth = g_settings.max_depth;
  auto* frames = static_cast<std::uint64_t*>(
      alloca((max_depth + kCaptureExtraFrames) * sizeof(std::uint64_t)));
  bool truncated = false;
  std::uint32_t depth = CaptureStack(frames, max_depth, &truncated);
  if (depth == 0) g_unwind_failures.fetch_add(1, std::memory_order_relaxed);
  if (truncated) g_truncated_stacks.fetch_add(1, std::memory_order_relaxed);
  recorder.Record(reinterpret_cast<std::uint64_t>(block), frames, depth, size,
                  Sampler::Weight(size, interval), NowNs(CLOCK_REALTIME));
  MaybeCapturePeak(recorder);
}

// The thread's countdown expired on an allocation of `size` bytes, not performed yet. Draws the
// next sample point and returns the sampling interval when this allocation is to be recorded, 0
// when not (a sample point inside heaprec's own allocations, the profiler off, or a thread's first
// allocation that does not reach its first point).
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

// Records a sampled block the program is about to receive. errno is the program's: kept.
void RecordBlock(void* block, std::size_t size, std::uint64_t interval) {
  HeapRecorder* recorder = g_recorder.load(std::memory_order_acquire);
  if (block == nullptr || recorder == nullptr) return;
  int saved_errno = errno;
  HookGuard guard;
  Record(*recorder, block, size, interval);
  errno = saved_errno;
}

// A block of the given kind for a sample: tagged where the allocator allows (tagged_blocks.h).
// *record says whether it may be recorded: a block that could not carry its tag is not, since its
// free would not find it.
void* AllocateForSample(AllocKind kind, std::size_t size, std::size_t alignment, bool* record) {
  if (!g_real.tagged_blocks) {
    *record = true;
    return AllocateUntagged(kind, size, alignment);
  }
  return AllocateTagged(kind, size, alignment, record);
}

// Detaches a sampled block's record before realloc moves or frees it (see HeapRecorder::Detach).
struct DetachedRecord {
  HeapRecorder* recorder = nullptr;
  LiveObject object;
  bool attached = false;

  void Detach(void* block) {
    recorder = g_recorder.load(std::memory_order_acquire);
    if (recorder == nullptr) return;
    HookGuard guard;  // a signal handler that allocates must not wait for the lock held here
    attached = recorder->Detach(reinterpret_cast<std::uint64_t>(block), &object);
  }
  // The reallocation failed: the old block is still the program's.
  void Reattach(void* block) {
    if (!attached) return;
    HookGuard guard;
    recorder->Reattach(reinterpret_cast<std::uint64_t>(block), object);
  }
  void Release() {
    if (!attached) return;
    HookGuard guard;
    recorder->ReleaseDetached(object);
  }
};

// realloc when the allocator is not glibc: no block is tagged, the filter says which may be
// sampled, and the allocator's own realloc does the work.
void* ReallocUntagged(void* old_block, std::size_t size, bool expired) {
  DetachedRecord detached;
  HeapRecorder* recorder = g_recorder.load(std::memory_order_acquire);
  if (recorder != nullptr && old_block != nullptr &&
      recorder->MaybeTracked(reinterpret_cast<std::uint64_t>(old_block))) {
    detached.Detach(old_block);
  }
  std::uint64_t interval = expired ? DrawSample(size) : 0;
  void* fresh = g_real.realloc(old_block, size);
  int saved_errno = errno;
  // On failure the old block is untouched and still the program's: track it again.
  if (fresh == nullptr && size != 0) {
    detached.Reattach(old_block);
  } else {
    detached.Release();
  }
  errno = saved_errno;
  if (interval != 0) RecordBlock(fresh, size, interval);
  return fresh;
}

// Moves a block into a fresh one (tagged when `tag_fresh`, for a sample) by hand: for a block
// tagged at an aligned offset, or an untagged block that becomes a sample.
void* MoveBlock(void* old_block, bool old_tagged, std::size_t size, bool tag_fresh) {
  bool tagged = false;
  void* fresh =
      tag_fresh ? AllocateTagged(AllocKind::kMalloc, size, 0, &tagged) : g_real.malloc(size);
  if (fresh == nullptr || old_block == nullptr) return fresh;
  std::size_t old_size = old_tagged ? TaggedUsableSize(old_block) : g_real.usable_size(old_block);
  memcpy(fresh, old_block, old_size < size ? old_size : size);
  ReleaseToAllocator(old_block);
  return fresh;
}

}  // namespace

void* AllocateSlow(AllocKind kind, std::size_t size, std::size_t alignment) {
  std::uint64_t interval = DrawSample(size);
  if (interval == 0) return AllocateUntagged(kind, size, alignment);
  bool record = false;
  void* block = AllocateForSample(kind, size, alignment, &record);
  if (record) RecordBlock(block, size, interval);
  return block;
}

int PosixMemalignSlow(void** out, std::size_t alignment, std::size_t size) {
  std::uint64_t interval = DrawSample(size);
  if (interval == 0 || !g_real.tagged_blocks) {
    int error = g_real.posix_memalign(out, alignment, size);
    if (interval != 0 && error == 0) RecordBlock(*out, size, interval);
    return error;
  }
  if (!IsPosixMemalignAlignment(alignment)) return EINVAL;  // before anything is allocated
  bool record = false;
  void* block = AllocateTagged(AllocKind::kMemalign, size, alignment, &record);
  if (block == nullptr) return ENOMEM;
  *out = block;
  if (record) RecordBlock(block, size, interval);
  return 0;
}

void* ReallocSlow(void* old_block, std::size_t size, bool expired) {
  if (!g_real.tagged_blocks) return ReallocUntagged(old_block, size, expired);
  bool old_tagged = old_block != nullptr && IsTagged(old_block);
  std::uint64_t interval = expired ? DrawSample(size) : 0;
  if (!old_tagged && interval == 0) return g_real.realloc(old_block, size);
  DetachedRecord detached;
  if (old_tagged) detached.Detach(old_block);
  if (old_tagged && size == 0) {  // realloc(p, 0) frees p and returns null, as glibc's does
    detached.Release();
    FreeTagged(old_block);
    return nullptr;
  }
  void* fresh = nullptr;
  bool fresh_tagged = interval != 0;
  if (!(old_tagged && fresh_tagged && ReallocTagged(old_block, size, &fresh))) {
    fresh = MoveBlock(old_block, old_tagged, size, fresh_tagged);
    fresh_tagged = fresh != nullptr && fresh_tagged && IsTagged(fresh);
  }
  int saved_errno = errno;
  if (fresh == nullptr) {
    detached.Reattach(old_block);
  } else {
    detached.Release();
  }
  errno = saved_errno;
  if (fresh_tagged) RecordBlock(fresh, size, interval);
  return fresh;
}

void ReleaseSampled(void* block) {
  ThreadState& t = t_state;
  if (t.in_hook && t.deferred_count < kMaxDeferredFrees) {
    t.deferred_frees[t.deferred_count++] = block;
    return;
  }
  HeapRecorder* recorder = g_recorder.load(std::memory_order_acquire);
  if (recorder != nullptr) {
    HookGuard guard;  // a signal handler that allocates must not wait for the locks Forget takes
    recorder->Forget(reinterpret_cast<std::uint64_t>(block));
  }
  ReleaseToAllocator(block);
}

// Runs as the outermost HookGuard ends. The thread is marked as inside heaprec again while it
// forgets, for the same reason as in ReleaseSampled; frees deferred meanwhile join the loop. A
// deferred signal comes last, once the thread holds none of heaprec's locks.
void LeaveHeaprec() {
  ThreadState& t = t_state;
  t.in_hook = true;
  while (t.deferred_count != 0) {
    void* block = t.deferred_frees[--t.deferred_count];
    HeapRecorder* recorder = g_recorder.load(std::memory_order_acquire);
    if (recorder != nullptr) recorder->Forget(reinterpret_cast<std::uint64_t>(block));
    ReleaseToAllocator(block);
  }
  t.in_hook = false;
  if (int signal_number = t.deferred_signal) {
    t.deferred_signal = 0;
    RaiseDeferredSignal(signal_number);
  }
}

MemoryResource* ProfilerMemory() {
  return g_recorder.load(std::memory_order_acquire) != nullptr ? g_arena : nullptr;
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

std::uint64_t DumpIntervalMs() { return g_settings.dump_interval_ms; }
int DumpSignal() { return g_settings.dump_signal; }

namespace {

// Makes a relative output template absolute against the start-up directory, so that a program that
// changes directory still writes its profile where the user asked.
bool AnchorOutputTemplate() {
  if (g_settings.output_template[0] == '/') return true;
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof(cwd)) == nullptr) return false;
  std::size_t cwd_length = strlen(cwd), template_length = strlen(g_settings.output_template);
  if (cwd_length + 1 + template_length + 1 > sizeof(g_settings.output_template)) return false;
  memmove(g_settings.output_template + cwd_length + 1, g_settings.output_template,
          template_length + 1);
  memcpy(g_settings.output_template, cwd, cwd_length);
  g_settings.output_template[cwd_length] = '/';
  return true;
}

// The output directory must exist and be writable now; finding out at exit would lose the profile.
bool CheckOutputDirectory() {
  char directory[PATH_MAX];
  const char* slash = strrchr(g_settings.output_template, '/');
  std::size_t length = static_cast<std::size_t>(slash - g_settings.output_template);
  if (length == 0) length = 1;  // "/"
  memcpy(directory, g_settings.output_template, length);
  directory[length] = '\0';
  if (strchr(directory, '%') != nullptr)
    return true;  // depends on the pid or time: checked at dump
  if (access(directory, W_OK | X_OK) == 0) return true;
  int error = errno;
  if (error == EACCES && UseFallbackDirectoryIfPrepared(directory)) return true;
  const char* parts[] = {"heaprec: HEAPREC_OUTPUT='",
                         g_settings.output_template,
                         "' is invalid: directory '",
                         directory,
                         "' is not writable (",
                         strerrordesc_np(error),
                         "); profiling is off for this process\n"};
  ReportMessage(parts, sizeof(parts) / sizeof(parts[0]));
  return false;
}

// With --no-follow and no pid to pin to, programs this one starts must not load heaprec: take it
// out of LD_PRELOAD (keeping any other preloaded libraries).
void StopFollowingExec() {
  const char* preload = getenv("LD_PRELOAD");
  if (preload == nullptr) return;
  static char kept[PATH_MAX * 2];
  std::size_t out = 0;
  const char* p = preload;
  while (*p != '\0') {
    while (*p == ' ' || *p == ':') ++p;
    const char* start = p;
    while (*p != '\0' && *p != ' ' && *p != ':') ++p;
    std::size_t length = static_cast<std::size_t>(p - start);
    if (length == 0) break;
    bool is_heaprec = memmem(start, length, "libheaprec", 10) != nullptr;
    if (!is_heaprec && out + length + 2 < sizeof(kept)) {
      if (out != 0) kept[out++] = ':';
      memcpy(kept + out, start, length);
      out += length;
    }
  }
  kept[out] = '\0';
  if (out == 0) {
    unsetenv("LD_PRELOAD");
  } else {
    setenv("LD_PRELOAD", kept, 1);
  }
}

// fork() from a thread inside heaprec (a signal handler that forks, interrupting a hook) may hold
// any of the locks below: the handlers then take none, and the child does not profile.
bool g_fork_from_inside = false;
sigset_t g_mask_before_fork;

// Lock order: unwind gate, signal table, dump, recorder, unloaded-library list, arena (the arena's
// lock is always innermost). Signals are blocked on the forking thread meanwhile: a handler there
// could want the signal table.
void ForkPrepare() {
  g_fork_from_inside = t_state.in_hook;
  CloseUnwindGateForFork(!g_fork_from_inside);
  if (g_fork_from_inside) return;
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &g_mask_before_fork);
  LockSignalTableForFork();
  LockDumpsForFork();
  if (HeapRecorder* recorder = g_recorder.load()) recorder->LockForFork();
  LockUnloadedForFork();
  g_arena->LockForFork();
}

void ForkParent() {
  OpenUnwindGateInParent();
  if (g_fork_from_inside) return;
  g_arena->UnlockAfterForkInParent();
  UnlockUnloadedAfterForkInParent();
  if (HeapRecorder* recorder = g_recorder.load()) recorder->UnlockAfterForkInParent();
  UnlockDumpsAfterForkInParent();
  UnlockSignalTableAfterFork();
  pthread_sigmask(SIG_SETMASK, &g_mask_before_fork, nullptr);
}

// The child keeps every tracked object (they are alive in the child too) and writes its own
// profiles. Its dump thread was not copied by fork(): it starts again when needed.
void ForkChild() {
  RememberOwnPid();
  OpenUnwindGateInChild();
  ForgetDumpThreadInChild();
  if (g_fork_from_inside) {
    g_sampling.store(false);
    g_recorder.store(nullptr);  // its tables may be half-updated: never touch them again
    return;
  }
  g_arena->ResetAfterForkInChild();
  ResetUnloadedAfterForkInChild();
  if (HeapRecorder* recorder = g_recorder.load()) recorder->ResetAfterForkInChild();
  ResetDumpsAfterForkInChild();
  UnlockSignalTableAfterFork();
  pthread_sigmask(SIG_SETMASK, &g_mask_before_fork, nullptr);
  StartDumpThreadIfConfigured();
}

// When the process began (before any exec), from /proc/self/stat: profiles already on disk that
// are newer belong to an earlier program of this process, and are never overwritten.
std::uint64_t ProcessStartNs() {
  std::uint64_t fallback = NowNs(CLOCK_REALTIME);
  int fd = OpenAboveStdio("/proc/self/stat", O_RDONLY, 0);
  if (fd < 0) return fallback;
  char text[1024];
  ssize_t n = read(fd, text, sizeof(text) - 1);
  close(fd);
  if (n <= 0) return fallback;
  text[n] = '\0';
  // Field 22, starttime in clock ticks since boot, counted after the ")" that ends the name.
  const char* p = strrchr(text, ')');
  if (p == nullptr) return fallback;
  for (int field = 2; field < 22 && *p != '\0'; ++p) {
    if (*p == ' ') ++field;
  }
  std::uint64_t ticks = 0;
  for (; *p >= '0' && *p <= '9'; ++p) ticks = ticks * 10 + static_cast<std::uint64_t>(*p - '0');
  long ticks_per_second = sysconf(_SC_CLK_TCK);
  if (ticks_per_second <= 0) return fallback;
  std::uint64_t since_boot = ticks * (1000000000ull / static_cast<std::uint64_t>(ticks_per_second));
  std::uint64_t boot = NowNs(CLOCK_REALTIME) - NowNs(CLOCK_BOOTTIME);
  return boot + since_boot;
}

__attribute__((constructor(101))) void StartProfiler() {
  ResolveRealAllocator();                 // usually done already, by the first allocation
  if (getauxval(AT_SECURE) != 0) return;  // setuid/setgid: stay out of the way entirely
  HookGuard guard;
  RememberStderr();
  if (!ReadSettings(&g_settings)) return;
  if (g_settings.only_pid != 0 && g_settings.only_pid != getpid()) return;
  if (g_settings.no_follow && g_settings.only_pid == 0) StopFollowingExec();
  if (!AnchorOutputTemplate() || !CheckOutputDirectory()) return;
  bool in_executable = false;
  if (const char* foreign = ForeignProgramMalloc(&in_executable)) {
    const char* library[] = {
        "heaprec: malloc comes from ", foreign,
        ", loaded before libheaprec.so; nothing can be profiled: put libheaprec.so "
        "first in LD_PRELOAD\n"};
    const char* executable[] = {
        "heaprec: the program defines its own malloc (", program_invocation_short_name,
        " has its allocator built in), which LD_PRELOAD cannot replace; nothing can be "
        "profiled\n"};
    if (in_executable) {
      WriteStderr(executable, sizeof(executable) / sizeof(executable[0]));
    } else {
      WriteStderr(library, sizeof(library) / sizeof(library[0]));
    }
    return;
  }
  g_start_time_ns = NowNs(CLOCK_REALTIME);
  g_process_start_ns = ProcessStartNs();
  RememberOwnPid();
  RememberExecutablePath();
  g_interval.store(g_settings.sample_interval);
  g_arena = new (g_arena_storage) MmapArena();
  RecorderOptions options;
  auto* recorder = new (g_recorder_storage) HeapRecorder(*g_arena, options);
  InitUnwinder(g_settings.unwind, *g_arena);
  pthread_atfork(ForkPrepare, ForkParent, ForkChild);
  g_recorder.store(recorder, std::memory_order_release);
  SetSampling(true);
  InstallSignalHandlers(g_settings.dump_signal);
  StartDumpThreadIfConfigured();
}

__attribute__((destructor(101))) void StopProfiler() {
  if (g_recorder.load(std::memory_order_acquire) == nullptr) return;
  DumpFinal(DumpReason::kExit, 0);
  // Recording goes on: frees from later destructors still find consistent tables.
}

}  // namespace
}  // namespace heaprec::preload
