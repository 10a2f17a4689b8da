#include "core/live_table.h"

#include <cstring>

#include "core/hash.h"
#include "core/live_set_observer.h"

namespace heaprec {

LiveTable::~LiveTable() {
  for (Shard& shard : shards_) {
    memory_.DeallocateArray(shard.index, shard.capacity);
    for (std::uint32_t c = 0; c < shard.chunk_count; ++c) {
      memory_.DeallocateArray(shard.chunks[c], ChunkCapacity(c));
    }
    memory_.DeallocateArray(shard.chunks, shard.directory_capacity);
  }
}

std::uint64_t LiveTable::HashKey(std::uint64_t key) { return MixBits(key); }

LiveTable::Record& LiveTable::At(const Shard& shard, std::uint32_t position) {
  // The small chunks hold 102 + 204 records; every later chunk kLargeChunkRecords.
  constexpr std::uint32_t kSmallTotal = ChunkCapacity(0) + ChunkCapacity(1);
  static_assert(kSmallChunks == 2, "kSmallTotal adds up the small chunks");
  if (position >= kSmallTotal) {
    std::uint32_t rest = position - kSmallTotal;
    return shard.chunks[kSmallChunks + rest / kLargeChunkRecords][rest % kLargeChunkRecords];
  }
  std::uint32_t c = 0;
  while (position >= ChunkCapacity(c)) position -= ChunkCapacity(c++);
  return shard.chunks[c][position];
}

// Rebuilds the index from the records, which are read in order (no random access but the
// index's own).
bool LiveTable::RehashLocked(Shard& shard, std::size_t new_capacity) {
  auto* fresh = memory_.AllocateArray<std::uint32_t>(new_capacity);
  if (fresh == nullptr) return false;
  std::memset(fresh, 0, new_capacity * sizeof(std::uint32_t));  // kEmptyEntry == 0
  std::size_t mask = new_capacity - 1;
  std::uint32_t position = 0;
  for (std::uint32_t c = 0; c < shard.chunk_count && position < shard.next_position; ++c) {
    const Record* chunk = shard.chunks[c];
    for (std::uint32_t i = 0; i < ChunkCapacity(c) && position < shard.next_position;
         ++i, ++position) {
      if (chunk[i].key == kFreeKey) continue;
      std::uint64_t hash = HashKey(chunk[i].key);
      std::size_t j = hash & mask;
      while (fresh[j] != kEmptyEntry) j = (j + 1) & mask;
      fresh[j] = Tag(hash) | (position + 1);
    }
  }
  memory_.DeallocateArray(shard.index, shard.capacity);
  shard.index = fresh;
  shard.capacity = new_capacity;
  shard.tombstones = 0;
  return true;
}

std::uint32_t* LiveTable::FindLocked(Shard& shard, std::uint64_t key, std::uint64_t hash) {
  if (shard.capacity == 0) return nullptr;
  std::size_t mask = shard.capacity - 1;
  const std::uint32_t tag = Tag(hash);
  for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
    std::uint32_t entry = shard.index[i];
    if (entry == kEmptyEntry) return nullptr;
    std::uint32_t position = entry & kPositionMask;
    if ((entry & ~kPositionMask) == tag && position != 0 && At(shard, position - 1).key == key) {
      return &shard.index[i];
    }
  }
}

bool LiveTable::NewPositionLocked(Shard& shard, std::uint32_t* position) {
  if (shard.free_head != 0) {
    *position = shard.free_head - 1;
    shard.free_head = static_cast<std::uint32_t>(At(shard, *position).object.size);
    return true;
  }
  if (shard.next_position == kMaxShardObjects) return false;
  // A new chunk when the handed-out positions fill every chunk so far.
  std::uint32_t chunked = 0;
  for (std::uint32_t c = 0; c < shard.chunk_count && c < kSmallChunks; ++c) {
    chunked += ChunkCapacity(c);
  }
  if (shard.chunk_count > kSmallChunks) {
    chunked += (shard.chunk_count - kSmallChunks) * kLargeChunkRecords;
  }
  if (shard.next_position == chunked) {
    if (shard.chunk_count == shard.directory_capacity) {
      std::uint32_t capacity = shard.directory_capacity == 0 ? 8 : shard.directory_capacity * 2;
      auto* directory = memory_.AllocateArray<Record*>(capacity);
      if (directory == nullptr) return false;
      if (shard.chunk_count != 0) {
        std::memcpy(directory, shard.chunks, shard.chunk_count * sizeof(Record*));
      }
      memory_.DeallocateArray(shard.chunks, shard.directory_capacity);
      shard.chunks = directory;
      shard.directory_capacity = capacity;
    }
    Record* chunk = memory_.AllocateArray<Record>(ChunkCapacity(shard.chunk_count));
    if (chunk == nullptr) return false;
    shard.chunks[shard.chunk_count++] = chunk;
  }
  *position = shard.next_position++;
  return true;
}

LiveTable::InsertResult LiveTable::Insert(std::uint64_t key, const LiveObject& object,
                                          LiveObject* replaced) {
  std::uint64_t hash = HashKey(key);
  Shard& shard = ShardFor(hash);
  MutexLock lock(shard.mutex);
  if (std::uint32_t* existing = FindLocked(shard, key, hash)) {
    Record& record = At(shard, (*existing & kPositionMask) - 1);
    *replaced = record.object;
    record.object = object;
    Notify(shard, [&](LiveSetObserver& o, std::size_t s) { o.ObjectAdded(s, key, object); });
    return InsertResult::kReplaced;
  }
  // Keep the index's load (entries plus tombstones) under 1/2 so probe sequences stay short; a
  // rehash leaves it at most 3/8 (so growing doubles the index: between 1/4 and 1/2 in use).
  if ((shard.used + shard.tombstones + 1) * 2 > shard.capacity) {
    std::size_t capacity = 64;
    while ((shard.used + 1) * 8 > capacity * 3) capacity *= 2;
    if (!RehashLocked(shard, capacity)) return InsertResult::kOutOfMemory;
  }
  std::uint32_t position;
  if (!NewPositionLocked(shard, &position)) return InsertResult::kOutOfMemory;
  Record& record = At(shard, position);
  record.key = key;
  record.object = object;
  std::size_t mask = shard.capacity - 1;
  std::size_t i = hash & mask;
  while (shard.index[i] != kEmptyEntry && shard.index[i] != kTombstone) i = (i + 1) & mask;
  if (shard.index[i] == kTombstone) --shard.tombstones;
  shard.index[i] = Tag(hash) | (position + 1);
  ++shard.used;
  filter_.Insert(key);
  Notify(shard, [&](LiveSetObserver& o, std::size_t s) { o.ObjectAdded(s, key, object); });
  return InsertResult::kInserted;
}

bool LiveTable::Remove(std::uint64_t key, LiveObject* removed) {
  std::uint64_t hash = HashKey(key);
  Shard& shard = ShardFor(hash);
  MutexLock lock(shard.mutex);
  std::uint32_t* entry = FindLocked(shard, key, hash);
  if (entry == nullptr) return false;
  std::uint32_t position = (*entry & kPositionMask) - 1;
  Record& record = At(shard, position);
  *removed = record.object;
  record.key = kFreeKey;
  record.object.size = shard.free_head;
  shard.free_head = position + 1;
  *entry = kTombstone;
  --shard.used;
  ++shard.tombstones;
  filter_.Remove(key);
  Notify(shard, [&](LiveSetObserver& o, std::size_t s) { o.ObjectRemoved(s, key); });
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

void LiveTable::Observe(LiveSetObserver* observer) {
  observer_.store(observer, std::memory_order_release);
  if (observer == nullptr) return;
  for (std::size_t s = 0; s < kShards; ++s) {
    Shard& shard = shards_[s];
    MutexLock lock(shard.mutex);
    std::uint32_t position = 0;
    for (std::uint32_t c = 0; c < shard.chunk_count && position < shard.next_position; ++c) {
      const Record* chunk = shard.chunks[c];
      for (std::uint32_t i = 0; i < ChunkCapacity(c) && position < shard.next_position;
           ++i, ++position) {
        if (chunk[i].key != kFreeKey) observer->ObjectAdded(s, chunk[i].key, chunk[i].object);
      }
    }
  }
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
