#include "core/heap_snapshot.h"

#include <algorithm>
#include <cstring>

#include "core/hash.h"
#include "core/prefault.h"

namespace heaprec {
namespace {

// kBySite starts this small and doubles: most programs have a few thousand sites.
constexpr std::size_t kFirstSiteEntries = 1024;

std::uint64_t SiteHash(const LiveObject& o) { return HashSizedKey(o.stack, o.generation, o.size); }

bool SameSite(const HeapSnapshot::Object& entry, const LiveObject& o) {
  return entry.stack == o.stack && entry.size == o.size && entry.generation == o.generation;
}

// Grows `array` (`count` of `capacity` in use) to hold at least `wanted`, at least doubling; false
// when memory ran out (the array is unchanged then).
template <typename T>
bool GrowArray(MemoryResource& memory, T*& array, std::size_t count, std::size_t& capacity,
               std::size_t wanted) {
  if (wanted <= capacity) return true;
  const std::size_t fresh_capacity = std::max(wanted, capacity * 2);
  T* fresh = memory.AllocateArray<T>(fresh_capacity);
  if (fresh == nullptr) return false;
  if (count != 0) std::memcpy(fresh, array, count * sizeof(T));
  memory.DeallocateArray(array, capacity);
  array = fresh;
  capacity = fresh_capacity;
  return true;
}

}  // namespace

// kEachObject's first allocation is what Take asks for (the live count and a quarter more), not
// rounded up to a power of two: a snapshot of 500,000 objects took 48 MiB instead of 29. Later
// growth (objects inserted while the shards are copied; kBySite's new sites) doubles.
bool HeapSnapshot::GrowObjects(std::size_t min_capacity) {
  return GrowArray(recorder_->memory_, objects_, object_count_, object_capacity_, min_capacity);
}

bool HeapSnapshot::Take(HeapRecorder& recorder, SnapshotGrouping grouping) {
  // Taken again from the same recorder (the peak copy, at every 10% of growth), a snapshot keeps
  // its arrays: new ones were new mappings, faulted in page by page and unmapped at the next
  // capture (a cc1 in exact mode: 25 captures, 42 ms).
  if (recorder_ == &recorder) {
    ReleaseStacks();
  } else {
    Release();
  }
  recorder_ = &recorder;
  stats_ = recorder.Stats();
  bool ok =
      CopyHistory(recorder) &&
      (grouping == SnapshotGrouping::kBySite ? CopyBySite(recorder) : CopyEachObject(recorder));
  if (!ok) Release();
  return ok;
}

// Pins the stacks (so the ids copied next stay readable) and copies the allocation history, with
// every thread's pending adds.
bool HeapSnapshot::CopyHistory(HeapRecorder& recorder) {
  recorder.MergeAllPending();
  MutexLock lock(recorder.stack_lock_);
  recorder.stacks_.Pin();
  node_bound_ = recorder.stacks_.id_bound();
  const std::size_t entries = recorder.history_.size();
  if (entries > history_capacity_) {
    recorder.memory_.DeallocateArray(history_, history_capacity_);
    // A quarter more: the next copy of a growing history fits.
    history_capacity_ = entries + entries / 4;
    history_ = recorder.memory_.AllocateArray<AllocationTotals>(history_capacity_);
    if (history_ == nullptr) {
      history_capacity_ = 0;
      return false;
    }
    // Written next from its start, every page of it: made present at once (prefault.h).
    PrefaultForWrite(history_, entries * sizeof(AllocationTotals));
  }
  history_count_ = recorder.history_.CopyTo(history_, history_capacity_);
  return true;
}

bool HeapSnapshot::CopyEachObject(HeapRecorder& recorder) {
  bool ok = GrowObjects(stats_.live_objects + stats_.live_objects / 4 + 16);
  // Objects inserted after the size was read may not fit; growing inside the visitor allocates
  // under a shard lock, which the lock order allows (the arena's lock is always taken last).
  recorder.live_.ForEach([&](std::uint64_t key, const LiveObject& o) {
    if (!ok) return;
    if (object_count_ == object_capacity_ && !GrowObjects(object_count_ + 1)) {
      ok = false;
      return;
    }
    objects_[object_count_++] = {key, o.stack, o.generation, o.size, o.weight, o.alloc_time_ns,
                                 0,   1};
  });
  return ok;
}

bool HeapSnapshot::CopyBySite(HeapRecorder& recorder) {
  bool ok = GrowObjects(kFirstSiteEntries) && GrowSiteIndex();
  // As in CopyEachObject, growth happens under a shard lock.
  recorder.live_.ForEach([&](std::uint64_t, const LiveObject& o) {
    if (!ok) return;
    Object* entry = SiteEntry(o);
    if (entry == nullptr) {
      ok = false;
      return;
    }
    entry->weight += o.weight;
    entry->count += 1;
    std::uint64_t t = o.alloc_time_ns;
    if (t != 0 && (entry->alloc_time_ns == 0 || t < entry->alloc_time_ns)) entry->alloc_time_ns = t;
  });
  // The index served the copy only.
  recorder.memory_.DeallocateArray(site_index_, site_index_capacity_);
  site_index_ = nullptr;
  site_index_capacity_ = 0;
  return ok;
}

HeapSnapshot::Object* HeapSnapshot::SiteEntry(const LiveObject& o) {
  const std::size_t mask = site_index_capacity_ - 1;
  std::size_t i = SiteHash(o) & mask;
  for (; site_index_[i] != 0; i = (i + 1) & mask) {
    Object& entry = objects_[site_index_[i] - 1];
    if (SameSite(entry, o)) return &entry;
  }
  if (object_count_ == object_capacity_ && !GrowObjects(object_count_ + 1)) return nullptr;
  site_index_[i] = static_cast<std::uint32_t>(object_count_ + 1);
  Object& entry = objects_[object_count_++];
  entry = {0, o.stack, o.generation, o.size, 0.0, 0, 0, 0};
  if (2 * object_count_ > site_index_capacity_ && !GrowSiteIndex()) return nullptr;
  return &entry;
}

// Doubles the index (or makes the first) and re-enters every entry from the entries themselves.
bool HeapSnapshot::GrowSiteIndex() {
  MemoryResource& memory = recorder_->memory_;
  std::size_t capacity =
      site_index_capacity_ == 0 ? 2 * kFirstSiteEntries : 2 * site_index_capacity_;
  auto* fresh = memory.AllocateZeroedArray<std::uint32_t>(capacity);
  if (fresh == nullptr) return false;
  const std::size_t mask = capacity - 1;
  for (std::size_t position = 0; position < object_count_; ++position) {
    const Object& e = objects_[position];
    std::size_t i = SiteHash({e.stack, e.generation, e.size, 0, 0}) & mask;
    while (fresh[i] != 0) i = (i + 1) & mask;
    fresh[i] = static_cast<std::uint32_t>(position + 1);
  }
  memory.DeallocateArray(site_index_, site_index_capacity_);
  site_index_ = fresh;
  site_index_capacity_ = capacity;
  return true;
}

std::uint64_t HeapSnapshot::sampled_objects() const {
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < object_count_; ++i) total += objects_[i].count;
  return total;
}

bool HeapSnapshot::AddObject(const std::uint64_t* frames, std::uint32_t depth, Object object) {
  if (recorder_ == nullptr) return false;
  constexpr std::size_t kFirstAdded = 256;
  if (!GrowArray(recorder_->memory_, added_stacks_, added_count_, added_capacity_,
                 std::max(kFirstAdded, added_count_ + 1)) ||
      !GrowObjects(object_count_ + 1)) {
    return false;
  }
  StackId stack;
  {
    MutexLock lock(recorder_->stack_lock_);
    stack = recorder_->stacks_.Intern(frames, depth);
  }
  if (stack == kInvalidStackId) return false;
  added_stacks_[added_count_++] = stack;
  object.stack = stack;
  objects_[object_count_++] = object;
  return true;
}

void HeapSnapshot::ReleaseStacks() {
  {
    MutexLock lock(recorder_->stack_lock_);
    for (std::size_t i = 0; i < added_count_; ++i) recorder_->stacks_.Unref(added_stacks_[i]);
    recorder_->stacks_.Unpin();
  }
  added_count_ = object_count_ = history_count_ = 0;
  node_bound_ = 0;
}

void HeapSnapshot::Release() {
  if (recorder_ == nullptr) return;
  ReleaseStacks();
  MemoryResource& memory = recorder_->memory_;
  memory.DeallocateArray(objects_, object_capacity_);
  memory.DeallocateArray(history_, history_capacity_);
  memory.DeallocateArray(site_index_, site_index_capacity_);
  memory.DeallocateArray(added_stacks_, added_capacity_);
  added_stacks_ = nullptr;
  added_capacity_ = 0;
  recorder_ = nullptr;
  objects_ = nullptr;
  history_ = nullptr;
  site_index_ = nullptr;
  object_count_ = object_capacity_ = history_count_ = history_capacity_ = site_index_capacity_ = 0;
}

void HeapSnapshot::SortByStackAndSize() {
  std::sort(objects_, objects_ + object_count_, [](const Object& a, const Object& b) {
    if (a.stack != b.stack) return a.stack < b.stack;
    return a.size != b.size ? a.size < b.size : a.tag < b.tag;
  });
  std::sort(history_, history_ + history_count_,
            [](const AllocationTotals& a, const AllocationTotals& b) {
              if (a.stack != b.stack) return a.stack < b.stack;
              return a.size != b.size ? a.size < b.size : a.tag < b.tag;
            });
}

}  // namespace heaprec
