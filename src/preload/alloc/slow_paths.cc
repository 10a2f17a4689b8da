// Recording and forgetting sampled blocks: the slow paths behind the allocation hooks' fast paths
// (hooks.cc). An allocation whose countdown expired is performed here (tagged, so that its free
// finds it; tagged_blocks.h), its stack captured and recorded; realloc of a sampled block detaches
// and re-records it; free of a sampled block forgets it before the block goes back to the
// allocator, or defers both while the thread is inside heaprec (HookGuard). Each runs for a small
// fraction of allocations, so it may lock the recorder briefly; it never calls malloc for itself.
#include "preload/alloc/slow_paths.h"

#include <alloca.h>
#include <errno.h>
#include <string.h>
#include <time.h>

#include "core/sampler.h"
#include "heaprec/runtime.h"
#include "preload/alloc/real_allocator.h"
#include "preload/alloc/sampling.h"
#include "preload/alloc/tagged_blocks.h"
#include "preload/control/settings.h"
#include "preload/dump/peak.h"
#include "preload/dump/timeline.h"
#include "preload/process/endings.h"
#include "preload/runtime/runtime.h"
#include "preload/state.h"
#include "preload/thread_state.h"
#include "preload/unwind/unwinder.h"

namespace heaprec::preload {
namespace {

// A sample's allocation time, for its age in profiles: the coarse realtime clock, which the vDSO
// reads from its data page without the TSC (the precise clock was 4-5% of exact mode's CPU time
// on python3). It lags the precise clock by at most a tick (4 ms at HZ=250), which only makes an
// age that much longer; ages are shown in seconds.
std::uint64_t AllocationTimeNs() { return NowNs(CLOCK_REALTIME_COARSE); }

// This thread's lane in the recorder (HeapRecorder::RecordWithHandle), set when it was seeded.
std::uint32_t Lane() { return t_state.lane; }

// Temporaries: a sampled block its thread frees before allocating anything else (memray's
// definition with a threshold of 0). Every allocation takes its size + 1 off the thread's
// countdown (hooks.cc), so "nothing else allocated" is "the countdown is what it was just after
// the sample": no work on the fast paths. The definition is per thread: a block freed by another
// thread is not temporary.
void NoteTemporaryCandidate(void* block, std::size_t size) {
  ThreadState& t = t_state;
  t.temporary_candidate = block;
  t.temporary_size = size;
  t.countdown_after_candidate = t.sampler.bytes_until_sample;
}

// Whether freeing `block` now makes it temporary (and forgets the candidate either way).
bool IsTemporary(void* block) {
  ThreadState& t = t_state;
  const bool temporary =
      block == t.temporary_candidate && t.sampler.bytes_until_sample == t.countdown_after_candidate;
  t.temporary_candidate = nullptr;
  return temporary;
}

void Record(HeapRecorder& recorder, void* block, std::size_t size, std::uint64_t interval,
            const WalkStart& start) {
  const auto key = reinterpret_cast<std::uint64_t>(block);
  const std::uint32_t lane = Lane();
  if (g_real.tagged_blocks()) recorder.PrefetchRecordWithHandle(lane);  // while the stack is walked
  const std::uint32_t max_depth = g_settings.max_depth;
  // In runtime mode the runtime appends its own frames (up to a whole profile's depth).
  const std::uint32_t capacity =
      (g_settings.runtime ? kMaxStackDepth : max_depth) + kCaptureExtraFrames;
  auto* frames = static_cast<std::uint64_t*>(alloca(capacity * sizeof(std::uint64_t)));
  bool truncated = false;
  std::uint32_t depth = CaptureStack(frames, max_depth, &truncated, &start);
  if (depth == 0) g_unwind_failures.fetch_add(1, std::memory_order_relaxed);
  if (truncated) g_truncated_stacks.fetch_add(1, std::memory_order_relaxed);
  if (g_settings.runtime) {
    depth = CompleteWithRuntimeFrames(frames, depth, capacity);
    if (depth == HEAPREC_RUNTIME_SKIP) {  // the runtime profiler's own memory
      if (g_real.tagged_blocks()) SetTicket(block, ObjectTicket{});
      return;
    }
  }
  const double weight = Sampler::Weight(size, interval);
  const std::uint64_t now = AllocationTimeNs();
  // A tagged block carries its record's handle; another allocator's blocks are found by address.
  if (g_real.tagged_blocks()) {
    SetTicket(block, recorder.RecordWithHandle(key, frames, depth, size, weight, now, lane));
  } else {
    recorder.Record(key, frames, depth, size, weight, now);
  }
  if (g_settings.runtime) return;  // the runtime's front end has its own peak and timeline
  MaybeCapturePeak(recorder);
  NoteTimeline(recorder, now);
}

// Forgets a sampled block the program is giving back: by its ticket when it is tagged.
void Forget(HeapRecorder& recorder, void* block) {
  const auto key = reinterpret_cast<std::uint64_t>(block);
  if (g_real.tagged_blocks()) {
    recorder.ForgetByTicket(TicketOf(block), key);
  } else {
    recorder.Forget(key);
  }
}

// Records a sampled block the program is about to receive, its stack walked from `start` (the
// hook's caller). errno is the program's: kept.
void RecordBlock(void* block, std::size_t size, std::uint64_t interval, const WalkStart& start) {
  HeapRecorder* recorder = g_recorder.load(std::memory_order_acquire);
  if (block == nullptr || recorder == nullptr) return;
  int saved_errno = errno;
  HookGuard guard;
  Record(*recorder, block, size, interval, start);
  NoteTemporaryCandidate(block, size);
  errno = saved_errno;
}

// A block of the given kind for a sample: tagged where the allocator allows (tagged_blocks.h).
// *record says whether it may be recorded: a block that could not carry its tag is not, since its
// free would not find it.
void* AllocateForSample(AllocKind kind, std::size_t size, std::size_t alignment, bool* record) {
  if (!g_real.tagged_blocks()) {
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
    const auto key = reinterpret_cast<std::uint64_t>(block);
    attached = g_real.tagged_blocks() ? recorder->DetachByHandle(HandleOf(block), key, &object)
                                      : recorder->Detach(key, &object);
  }
  // After the reallocation: when it `failed` the old block is still the program's and is tracked
  // again; otherwise its record goes. errno is the reallocation's: kept.
  void Settle(void* block, bool failed) {
    int saved_errno = errno;
    if (failed) {
      Reattach(block);
    } else {
      Release();
    }
    errno = saved_errno;
  }
  void Release() {
    if (!attached) return;
    HookGuard guard;
    recorder->ReleaseDetached(object);
  }
  void Reattach(void* block) {
    if (!attached) return;
    HookGuard guard;
    const auto key = reinterpret_cast<std::uint64_t>(block);
    if (g_real.tagged_blocks()) {
      SetTicket(block, recorder->ReattachWithHandle(key, object, Lane()));
    } else {
      recorder->Reattach(key, object);
    }
  }
};

// realloc when the allocator is not glibc: no block is tagged, the filter says which may be
// sampled, and the allocator's own realloc does the work.
void* ReallocUntagged(void* old_block, std::size_t size, bool expired, const WalkStart& start) {
  DetachedRecord detached;
  HeapRecorder* recorder = g_recorder.load(std::memory_order_acquire);
  if (recorder != nullptr && old_block != nullptr &&
      recorder->MaybeTracked(reinterpret_cast<std::uint64_t>(old_block))) {
    detached.Detach(old_block);
  }
  std::uint64_t interval = expired ? DrawSample(size) : 0;
  void* fresh = g_real.realloc(old_block, size);
  // A null from realloc(p, 0) means p was freed; any other null, that the old block is untouched.
  detached.Settle(old_block, fresh == nullptr && size != 0);
  if (interval != 0) RecordBlock(fresh, size, interval, start);
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

// The three entries from the hooks, never inlined: each walk starts at its own caller, the hook's
// caller when the hook tail-calls (malloc, calloc, the aligned forms) or the hook's frame, dropped
// as heaprec's own, when it does not (operator new).
__attribute__((noinline)) void* AllocateSlow(AllocKind kind, std::size_t size,
                                             std::size_t alignment) {
  std::uint64_t interval = DrawSample(size);
  if (interval == 0) return AllocateUntagged(kind, size, alignment);
  bool record = false;
  void* block = AllocateForSample(kind, size, alignment, &record);
  if (record) RecordBlock(block, size, interval, HEAPREC_CALLER_OF_THIS_FUNCTION());
  return block;
}

__attribute__((noinline)) int PosixMemalignSlow(void** out, std::size_t alignment,
                                                std::size_t size) {
  const WalkStart caller = HEAPREC_CALLER_OF_THIS_FUNCTION();
  std::uint64_t interval = DrawSample(size);
  if (interval == 0 || !g_real.tagged_blocks()) {
    int error = g_real.posix_memalign(out, alignment, size);
    if (interval != 0 && error == 0) RecordBlock(*out, size, interval, caller);
    return error;
  }
  if (!IsPosixMemalignAlignment(alignment)) return EINVAL;  // before anything is allocated
  bool record = false;
  void* block = AllocateTagged(AllocKind::kMemalign, size, alignment, &record);
  if (block == nullptr) return ENOMEM;
  *out = block;
  if (record) RecordBlock(block, size, interval, caller);
  return 0;
}

__attribute__((noinline)) void* ReallocSlow(void* old_block, std::size_t size, bool expired) {
  const WalkStart caller = HEAPREC_CALLER_OF_THIS_FUNCTION();
  if (!g_real.tagged_blocks()) return ReallocUntagged(old_block, size, expired, caller);
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
  detached.Settle(old_block, fresh == nullptr);
  if (fresh_tagged) RecordBlock(fresh, size, interval, caller);
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
    if (IsTemporary(block) && g_real.tagged_blocks()) {
      recorder->CountTemporary(TicketOf(block).stack, t.temporary_size, Lane());
    }
    Forget(*recorder, block);
    NoteTimeline(*recorder, AllocationTimeNs());
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
    if (recorder != nullptr) Forget(*recorder, block);
    ReleaseToAllocator(block);
  }
  t.in_hook = false;
  if (int signal_number = t.deferred_signal) {
    t.deferred_signal = 0;
    RaiseDeferredSignal(signal_number);
  }
}

}  // namespace heaprec::preload
