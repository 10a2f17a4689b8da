#include "core/heap_recorder.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace heaprec {

HeapRecorder::HeapRecorder(MemoryResource& memory, const RecorderOptions& options)
    : memory_(memory), options_(options), stacks_(memory), history_(memory), live_(memory) {}

std::int64_t HeapRecorder::Contribution(const LiveObject& o) {
  return std::llround(o.weight * static_cast<double>(o.size));
}

void HeapRecorder::Record(std::uint64_t key, const std::uint64_t* frames, std::uint32_t depth,
                          std::uint64_t size, double weight, std::uint64_t alloc_time_ns,
                          std::uint32_t generation) {
  StackId stack;
  {
    MutexLock lock(stack_lock_);
    stack = stacks_.Intern(frames, depth);
    if (stack == kInvalidStackId) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    if (options_.keep_allocation_history) {
      bool dropped = false;
      if (history_.Add(stack, size, weight, &dropped)) stacks_.Ref(stack);
      if (dropped) dropped_.fetch_add(1, std::memory_order_relaxed);
    }
  }
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
      stacks_.Unref(replaced.stack);
      return;
    }
    case LiveTable::InsertResult::kOutOfMemory: {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      MutexLock lock(stack_lock_);
      stacks_.Unref(stack);
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
  MutexLock lock(stack_lock_);
  stacks_.Unref(detached.stack);
}

RecorderStats HeapRecorder::Stats() const {
  RecorderStats s;
  s.samples = samples_.load(std::memory_order_relaxed);
  s.forgotten = forgotten_.load(std::memory_order_relaxed);
  s.replaced = replaced_.load(std::memory_order_relaxed);
  s.dropped = dropped_.load(std::memory_order_relaxed);
  s.live_objects = live_.size();
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

void HeapRecorder::LockForFork() {
  stack_lock_.Lock();
  live_.LockAllForFork();
}

void HeapRecorder::UnlockAfterForkInParent() {
  live_.UnlockAllAfterForkInParent();
  stack_lock_.Unlock();
}

void HeapRecorder::ResetAfterForkInChild() {
  live_.ResetAllAfterForkInChild();
  stack_lock_.ResetAfterFork();
}

// The first allocation is what Take asks for (the live count and a quarter more), not rounded up
// to a power of two: a snapshot of 500,000 objects took 48 MiB instead of 29. Later growth (objects
// inserted while the shards are copied) doubles.
bool HeapSnapshot::GrowObjects(std::size_t min_capacity) {
  if (min_capacity <= object_capacity_) return true;
  std::size_t capacity = std::max(min_capacity, object_capacity_ * 2);
  MemoryResource& memory = recorder_->memory_;
  auto* fresh = memory.AllocateArray<Object>(capacity);
  if (fresh == nullptr) return false;
  if (object_count_ != 0) std::memcpy(fresh, objects_, object_count_ * sizeof(Object));
  memory.DeallocateArray(objects_, object_capacity_);
  objects_ = fresh;
  object_capacity_ = capacity;
  return true;
}

bool HeapSnapshot::Take(HeapRecorder& recorder) {
  Release();
  recorder_ = &recorder;
  stats_ = recorder.Stats();
  {
    MutexLock lock(recorder.stack_lock_);
    recorder.stacks_.Pin();
    history_capacity_ = recorder.history_.size();
    if (history_capacity_ != 0) {
      history_ = recorder.memory_.AllocateArray<AllocationTotals>(history_capacity_);
      if (history_ == nullptr) history_capacity_ = 0;
      history_count_ = recorder.history_.CopyTo(history_, history_capacity_);
    }
  }
  bool ok = (history_ != nullptr || history_capacity_ == 0) &&
            GrowObjects(stats_.live_objects + stats_.live_objects / 4 + 16);
  // Objects inserted after the size was read may not fit; growing inside the visitor would allocate
  // under a shard lock, which the lock order allows (the arena's lock is always taken last).
  recorder.live_.ForEach([&](std::uint64_t key, const LiveObject& o) {
    if (!ok) return;
    if (object_count_ == object_capacity_ && !GrowObjects(object_count_ + 1)) {
      ok = false;
      return;
    }
    objects_[object_count_++] = {key, o.stack, o.generation, o.size, o.weight, o.alloc_time_ns, 0};
  });
  if (!ok) {
    Release();
    return false;
  }
  return true;
}

void HeapSnapshot::Release() {
  if (recorder_ == nullptr) return;
  MemoryResource& memory = recorder_->memory_;
  memory.DeallocateArray(objects_, object_capacity_);
  memory.DeallocateArray(history_, history_capacity_);
  {
    MutexLock lock(recorder_->stack_lock_);
    recorder_->stacks_.Unpin();
  }
  recorder_ = nullptr;
  objects_ = nullptr;
  history_ = nullptr;
  object_count_ = object_capacity_ = history_count_ = history_capacity_ = 0;
}

void HeapSnapshot::SortByStackAndSize() {
  std::sort(objects_, objects_ + object_count_, [](const Object& a, const Object& b) {
    if (a.stack != b.stack) return a.stack < b.stack;
    return a.size != b.size ? a.size < b.size : a.tag < b.tag;
  });
  std::sort(history_, history_ + history_count_,
            [](const AllocationTotals& a, const AllocationTotals& b) {
              return a.stack != b.stack ? a.stack < b.stack : a.size < b.size;
            });
}

}  // namespace heaprec
