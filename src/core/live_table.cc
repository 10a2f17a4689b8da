#include "core/live_table.h"

#include <cstring>

#include "core/hash.h"

namespace heaprec {

LiveTable::~LiveTable() {
  for (Shard& shard : shards_) memory_.DeallocateArray(shard.slots, shard.capacity);
}

std::uint64_t LiveTable::HashKey(std::uint64_t key) { return MixBits(key); }

bool LiveTable::RehashLocked(Shard& shard, std::size_t new_capacity) {
  Slot* fresh = memory_.AllocateArray<Slot>(new_capacity);
  if (fresh == nullptr) return false;
  std::memset(fresh, 0, new_capacity * sizeof(Slot));  // kEmpty == 0
  for (std::size_t i = 0; i < shard.capacity; ++i) {
    const Slot& slot = shard.slots[i];
    if (slot.key == kEmpty || slot.key == kTombstone) continue;
    std::size_t j = HashKey(slot.key) & (new_capacity - 1);
    while (fresh[j].key != kEmpty) j = (j + 1) & (new_capacity - 1);
    fresh[j] = slot;
  }
  memory_.DeallocateArray(shard.slots, shard.capacity);
  shard.slots = fresh;
  shard.capacity = new_capacity;
  shard.tombstones = 0;
  return true;
}

LiveTable::Slot* LiveTable::FindLocked(Shard& shard, std::uint64_t key, std::uint64_t hash) {
  if (shard.capacity == 0) return nullptr;
  std::size_t mask = shard.capacity - 1;
  for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
    Slot& slot = shard.slots[i];
    if (slot.key == key) return &slot;
    if (slot.key == kEmpty) return nullptr;
  }
}

LiveTable::InsertResult LiveTable::Insert(std::uint64_t key, const LiveObject& object,
                                          LiveObject* replaced) {
  std::uint64_t hash = HashKey(key);
  Shard& shard = ShardFor(hash);
  MutexLock lock(shard.mutex);
  if (Slot* existing = FindLocked(shard, key, hash)) {
    *replaced = existing->object;
    existing->object = object;
    return InsertResult::kReplaced;
  }
  // Keep the load (entries plus tombstones) under 1/2 so probe sequences stay short.
  if ((shard.used + shard.tombstones + 1) * 2 > shard.capacity) {
    std::size_t capacity = shard.capacity == 0 ? 64 : shard.capacity;
    while ((shard.used + 1) * 4 > capacity) capacity *= 2;
    if (!RehashLocked(shard, capacity)) return InsertResult::kOutOfMemory;
  }
  std::size_t mask = shard.capacity - 1;
  std::size_t i = hash & mask;
  while (shard.slots[i].key != kEmpty && shard.slots[i].key != kTombstone) i = (i + 1) & mask;
  if (shard.slots[i].key == kTombstone) --shard.tombstones;
  shard.slots[i].key = key;
  shard.slots[i].object = object;
  ++shard.used;
  filter_.Insert(key);
  return InsertResult::kInserted;
}

bool LiveTable::Remove(std::uint64_t key, LiveObject* removed) {
  std::uint64_t hash = HashKey(key);
  Shard& shard = ShardFor(hash);
  MutexLock lock(shard.mutex);
  Slot* slot = FindLocked(shard, key, hash);
  if (slot == nullptr) return false;
  *removed = slot->object;
  slot->key = kTombstone;
  --shard.used;
  ++shard.tombstones;
  filter_.Remove(key);
  return true;
}

std::size_t LiveTable::size() const {
  std::size_t total = 0;
  for (const Shard& shard : shards_) {
    MutexLock lock(const_cast<Mutex&>(shard.mutex));
    total += shard.used;
  }
  return total;
}

void LiveTable::LockAllForFork() {
  for (Shard& shard : shards_) shard.mutex.Lock();
}

void LiveTable::UnlockAllAfterForkInParent() {
  for (Shard& shard : shards_) shard.mutex.Unlock();
}

void LiveTable::ResetAllAfterForkInChild() {
  for (Shard& shard : shards_) shard.mutex.ResetAfterFork();
}

}  // namespace heaprec
