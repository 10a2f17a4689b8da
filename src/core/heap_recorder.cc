#include "core/heap_recorder.h"

#include <cstring>

#include "core/live_set_observer.h"

namespace heaprec {

HeapRecorder::HeapRecorder(MemoryResource& memory, const RecorderOptions& options)
    : memory_(memory),
      options_(options),
      objects_hold_stacks_(!options.keep_allocation_history),
      stacks_(memory),
      history_(memory),
      live_(memory) {}

HeapRecorder::~HeapRecorder() {
  for (ThreadCache& cache : caches_) memory_.DeallocateArray(cache.space, 1);
}

HeapRecorder::ThreadCache* HeapRecorder::LaneCacheLocked(std::uint32_t lane) {
  // Caches only with the history on (see objects_hold_stacks_).
  if (objects_hold_stacks_) return nullptr;
  ThreadCache& cache = caches_[lane % kThreadCaches];
  if (cache.space == nullptr) {
    // At the lane's first use: a process of one thread maps one lane's arrays, not 32. Only the
    // entries are cleared (their first page), not the ring, whose pages are touched as it fills.
    cache.space = memory_.AllocateArray<ThreadCacheSpace>(1);
    if (cache.space == nullptr) return nullptr;
    std::memset(cache.space->stacks, 0, sizeof(cache.space->stacks));
    cache.recent.Attach(cache.space->stacks, ThreadCacheSpace::kStacks, cache.space->frames,
                        ThreadCacheSpace::kFrames);
  }
  return &cache;
}

// Rounded by hand: llround is a libm call of about 30 instructions, twice per exact-mode
// allocation. The estimate needs only the same value when an object comes and goes, which any
// deterministic rounding gives; weight x size is never negative, and sizes are below 2^63.
std::int64_t HeapRecorder::Contribution(const LiveObject& o) {
  return Contribution(o.size, o.weight);
}

std::int64_t HeapRecorder::Contribution(std::uint64_t size, double weight) {
  double bytes = weight * static_cast<double>(size) + 0.5;
  constexpr double kLargest = 9.2e18;  // below INT64_MAX, so the conversion is defined
  return static_cast<std::int64_t>(bytes < kLargest ? bytes : kLargest);
}

StackId HeapRecorder::InternForRecord(const std::uint64_t* frames, std::uint32_t depth,
                                      std::uint64_t size, double weight,
                                      std::uint32_t history_tag) {
  MutexLock lock(stack_lock_);
  // With the history on, objects take no reference of their own (see objects_hold_stacks_).
  StackId stack = objects_hold_stacks_ ? stacks_.Intern(frames, depth)
                                       : stacks_.InternUnreferenced(frames, depth);
  if (stack == kInvalidStackId) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return kInvalidStackId;
  }
  if (options_.keep_allocation_history) {
    const AllocationTotals add = {stack, 0, size, weight, 0, history_tag};
    MergeHistoryLocked(&add, 1);
  }
  // Only this thread writes under the lock: no read-modify-write.
  allocated_locked_.store(
      allocated_locked_.load(std::memory_order_relaxed) + Contribution(size, weight),
      std::memory_order_relaxed);
  return stack;
}

StackId HeapRecorder::InternThroughCache(ThreadCache& cache, const std::uint64_t* frames,
                                         std::uint32_t depth, std::uint64_t size, double weight) {
  // The empty stack and the deepest go to the stack table, which knows them without a lookup or
  // through its trie.
  const bool cacheable = depth != 0 && depth <= cache.recent.max_depth();
  const RecentStacks::Found recent = cacheable ? cache.recent.Find(frames, depth, kLaneEpoch)
                                               : RecentStacks::Found{kInvalidStackId, 0};
  StackId stack = recent.id;
  if (stack == kInvalidStackId || cache.pending_count == ThreadCacheSpace::kPending) {
    MutexLock lock(stack_lock_);
    if (stack == kInvalidStackId) {
      stack = stacks_.InternUnreferenced(frames, depth);
      if (stack == kInvalidStackId) {
        dropped_.fetch_add(1, std::memory_order_relaxed);
        return kInvalidStackId;
      }
      if (cacheable) cache.recent.Remember(recent.hash, stack, frames, depth, kLaneEpoch);
    }
    if (cache.pending_count == ThreadCacheSpace::kPending) {
      MergeHistoryLocked(cache.space->pending, cache.pending_count);
      cache.pending_count = 0;
    }
  }
  cache.space->pending[cache.pending_count++] = {stack, 0, size, weight, 0, 0};
  cache.allocated.store(
      cache.allocated.load(std::memory_order_relaxed) + Contribution(size, weight),
      std::memory_order_relaxed);
  return stack;
}

void HeapRecorder::AddPendingLocked(ThreadCache& cache, const AllocationTotals& add) {
  if (cache.pending_count == ThreadCacheSpace::kPending) {
    MutexLock lock(stack_lock_);
    MergeHistoryLocked(cache.space->pending, cache.pending_count);
    cache.pending_count = 0;
  }
  cache.space->pending[cache.pending_count++] = add;
}

void HeapRecorder::CountTemporary(StackId stack, std::uint64_t size, std::uint32_t lane) {
  if (!options_.keep_allocation_history || stack == kInvalidStackId) return;
  const AllocationTotals add = {stack, 1, size, 0, 0, 0};
  {
    MutexLock lane_lock(live_.LaneMutex(lane));
    if (ThreadCache* cache = LaneCacheLocked(lane)) {
      AddPendingLocked(*cache, add);
      return;
    }
  }
  MutexLock lock(stack_lock_);
  MergeHistoryLocked(&add, 1);
}

std::int64_t HeapRecorder::AllocatedBytesEstimate() const {
  std::int64_t total = allocated_locked_.load(std::memory_order_relaxed);
  for (const ThreadCache& cache : caches_) total += cache.allocated.load(std::memory_order_relaxed);
  return total;
}

void HeapRecorder::MergeHistoryLocked(const AllocationTotals* adds, std::size_t count) {
  history_.Merge(
      adds, count, [this](StackId stack) { stacks_.Ref(stack); },
      [this] { dropped_.fetch_add(1, std::memory_order_relaxed); });
}

void HeapRecorder::MergeAllPending() {
  if (objects_hold_stacks_) return;  // no caches are used
  for (std::uint32_t lane = 0; lane < kThreadCaches; ++lane) {
    ThreadCache& cache = caches_[lane];
    MutexLock lane_lock(live_.LaneMutex(lane));
    if (cache.pending_count == 0) continue;
    MutexLock lock(stack_lock_);
    MergeHistoryLocked(cache.space->pending, cache.pending_count);
    cache.pending_count = 0;
  }
}

void HeapRecorder::UnrefObjectsStackLocked(StackId stack) {
  if (objects_hold_stacks_) stacks_.Unref(stack);
}

void HeapRecorder::Record(std::uint64_t key, const std::uint64_t* frames, std::uint32_t depth,
                          std::uint64_t size, double weight, std::uint64_t alloc_time_ns,
                          std::uint32_t generation, std::uint32_t history_tag) {
  StackId stack = InternForRecord(frames, depth, size, weight, history_tag);
  if (stack == kInvalidStackId) return;
  LiveObject object = {stack, generation, size, weight, alloc_time_ns};
  LiveObject replaced;
  switch (live_.Insert(key, object, &replaced)) {
    case LiveTable::InsertResult::kInserted:
      samples_.fetch_add(1, std::memory_order_relaxed);
      AddLive(object);
      return;
    case LiveTable::InsertResult::kReplaced: {
      samples_.fetch_add(1, std::memory_order_relaxed);
      replaced_.fetch_add(1, std::memory_order_relaxed);
      AddLive(object);
      SubtractLive(replaced);
      MutexLock lock(stack_lock_);
      UnrefObjectsStackLocked(replaced.stack);
      return;
    }
    case LiveTable::InsertResult::kOutOfMemory: {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      MutexLock lock(stack_lock_);
      UnrefObjectsStackLocked(stack);
      return;
    }
  }
}

bool HeapRecorder::Forget(std::uint64_t key) {
  LiveObject removed;
  if (!Detach(key, &removed)) return false;
  ReleaseDetached(removed);
  return true;
}

bool HeapRecorder::Detach(std::uint64_t key, LiveObject* detached) {
  if (!live_.Remove(key, detached)) return false;
  SubtractLive(*detached);
  return true;
}

void HeapRecorder::Reattach(std::uint64_t key, const LiveObject& detached) {
  LiveObject replaced;
  switch (live_.Insert(key, detached, &replaced)) {
    case LiveTable::InsertResult::kInserted:
      AddLive(detached);
      return;
    case LiveTable::InsertResult::kReplaced:  // cannot happen for a block the caller still owns
      AddLive(detached);
      SubtractLive(replaced);
      ReleaseDetached(replaced);
      return;
    case LiveTable::InsertResult::kOutOfMemory:
      dropped_.fetch_add(1, std::memory_order_relaxed);
      ReleaseDetached(detached);
      return;
  }
}

void HeapRecorder::ReleaseDetached(const LiveObject& detached) {
  forgotten_.fetch_add(1, std::memory_order_relaxed);
  ReleaseStack(detached.stack);
}

void HeapRecorder::ReleaseStack(StackId stack) {
  if (!objects_hold_stacks_) return;
  // Most frees drop a reference that is not the stack's last: no lock (two threads freeing at
  // once no longer wait for each other, nor for a thread recording).
  if (stacks_.UnrefIfNotLast(stack)) return;
  MutexLock lock(stack_lock_);
  stacks_.Unref(stack);
}

ObjectTicket HeapRecorder::RecordWithHandle(std::uint64_t key, const std::uint64_t* frames,
                                            std::uint32_t depth, std::uint64_t size, double weight,
                                            std::uint64_t alloc_time_ns, std::uint32_t lane) {
  LiveObject object = {kInvalidStackId, 0, size, weight, alloc_time_ns};
  std::uint32_t handle = 0;
  bool inserted;
  {
    // One lock for the lane's cache and its shard of the live table.
    MutexLock lane_lock(live_.LaneMutex(lane));
    ThreadCache* cache = LaneCacheLocked(lane);
    object.stack = cache != nullptr ? InternThroughCache(*cache, frames, depth, size, weight)
                                    : InternForRecord(frames, depth, size, weight);
    if (object.stack == kInvalidStackId) return TicketFor(0, {});
    inserted = live_.InsertWithHandleLocked(key, object, lane, &handle);
  }
  if (!inserted) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    MutexLock lock(stack_lock_);
    UnrefObjectsStackLocked(object.stack);
    return TicketFor(0, {});
  }
  AddLive(object);  // counted as a sample by the live table (LiveTable::HandleCounts)
  return TicketFor(handle, object);
}

bool HeapRecorder::ForgetByTicket(const ObjectTicket& ticket, std::uint64_t key) {
  if (!live_.DropByHandle(ticket.handle, key)) return false;
  live_bytes_.fetch_sub(ticket.contribution, std::memory_order_relaxed);
  ReleaseStack(ticket.stack);  // counted as forgotten by the live table
  return true;
}

bool HeapRecorder::DetachByHandle(std::uint32_t handle, std::uint64_t key, LiveObject* detached) {
  if (!live_.RemoveByHandle(handle, key, detached)) return false;
  SubtractLive(*detached);
  return true;
}

ObjectTicket HeapRecorder::ReattachWithHandle(std::uint64_t key, const LiveObject& detached,
                                              std::uint32_t lane) {
  std::uint32_t handle = 0;
  if (!live_.InsertWithHandle(key, detached, lane, &handle)) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    ReleaseDetached(detached);
    return TicketFor(0, {});
  }
  reattached_.fetch_add(1, std::memory_order_relaxed);  // an insert that is no new sample
  AddLive(detached);
  return TicketFor(handle, detached);
}

void HeapRecorder::ForgetAll() {
  live_.RemoveAll([this](const LiveObject& gone) {
    SubtractLive(gone);
    ReleaseDetached(gone);
  });
}

void HeapRecorder::ClearAllocationHistory() {
  for (std::uint32_t lane = 0; lane < kThreadCaches; ++lane) {
    ThreadCache& cache = caches_[lane];
    MutexLock lane_lock(live_.LaneMutex(lane));
    cache.pending_count = 0;
    cache.allocated.store(0, std::memory_order_relaxed);
  }
  MutexLock lock(stack_lock_);
  // The entries' references stay on their stacks: with the history on, live objects hold none of
  // their own and rely on them (objects_hold_stacks_), and stacks are never freed then anyway.
  history_.Clear();
  allocated_locked_.store(0, std::memory_order_relaxed);
}

RecorderStats HeapRecorder::Stats() const {
  RecorderStats s;
  const LiveTable::HandleCounts handled = live_.CountHandles();
  s.samples = samples_.load(std::memory_order_relaxed) + handled.inserted -
              reattached_.load(std::memory_order_relaxed);
  s.forgotten = forgotten_.load(std::memory_order_relaxed) + handled.dropped;
  s.replaced = replaced_.load(std::memory_order_relaxed);
  s.dropped = dropped_.load(std::memory_order_relaxed);
  s.live_objects = live_.size();
  const_cast<HeapRecorder*>(this)->MergeAllPending();
  MutexLock lock(stack_lock_);
  s.stacks = stacks_.size();
  s.history_entries = history_.size();
  return s;
}

void HeapRecorder::Observe(LiveSetObserver* observer) {
  // Nodes first: an object's stack is told of before the object, as Record makes them.
  {
    MutexLock lock(stack_lock_);
    stacks_.Observe(observer);
  }
  live_.Observe(observer);
}

// In the lock order: the shards (which guard the lanes' caches), then the stack lock.
void HeapRecorder::LockForFork() {
  live_.LockAllForFork();
  stack_lock_.Lock();
}

void HeapRecorder::UnlockAfterForkInParent() {
  stack_lock_.Unlock();
  live_.UnlockAllAfterForkInParent();
}

void HeapRecorder::ResetAfterForkInChild() {
  stack_lock_.ResetAfterFork();
  live_.ResetAllAfterForkInChild();
}

}  // namespace heaprec
