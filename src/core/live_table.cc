#include "core/live_table.h"

#include <cstring>

#include "core/hash.h"
#include "core/live_set_observer.h"
#include "core/prefault.h"

namespace heaprec {

LiveTable::~LiveTable() {
  for (Shard& shard : shards_) {
    memory_.DeallocateArray(shard.index, shard.capacity);
    DeallocateStore(shard.indexed);
    DeallocateStore(shard.handled);
  }
}

void LiveTable::DeallocateStore(RecordStore& store) {
  for (std::uint32_t c = 0; c < store.chunk_count; ++c) {
    if (store.chunks[c] != nullptr) memory_.DeallocateArray(store.chunks[c], ChunkCapacity(c));
  }
  memory_.DeallocateArray(store.chunks, store.directory_capacity);
  memory_.DeallocateArray(store.free_positions, store.free_capacity);
}

std::uint64_t LiveTable::HashKey(std::uint64_t key) { return MixBits(key); }

std::uint32_t LiveTable::ChunkOf(std::uint32_t position, std::uint32_t* offset) {
  // The small chunks hold 102 + 204 records; every later chunk kLargeChunkRecords.
  constexpr std::uint32_t kSmallTotal = ChunkCapacity(0) + ChunkCapacity(1);
  static_assert(kSmallChunks == 2, "kSmallTotal adds up the small chunks");
  if (position >= kSmallTotal) {
    std::uint32_t rest = position - kSmallTotal;
    *offset = rest % kLargeChunkRecords;
    return kSmallChunks + rest / kLargeChunkRecords;
  }
  std::uint32_t c = 0;
  while (position >= ChunkCapacity(c)) position -= ChunkCapacity(c++);
  *offset = position;
  return c;
}

LiveTable::Record& LiveTable::At(const RecordStore& store, std::uint32_t position) {
  std::uint32_t offset;
  std::uint32_t c = ChunkOf(position, &offset);
  return store.chunks[c][offset];
}

LiveTable::Record* LiveTable::NextRecordLocked(const RecordStore& store) {
  if (store.free_count != 0) return &At(store, store.free_positions[store.free_count - 1]);
  std::uint32_t offset;
  std::uint32_t c = ChunkOf(store.next_position, &offset);
  return c < store.chunk_count && store.chunks[c] != nullptr ? &store.chunks[c][offset] : nullptr;
}

void LiveTable::PrefetchInsertWithHandle(std::uint32_t lane) const {
  const Record* next = shards_[lane % kShards].next_handled.load(std::memory_order_relaxed);
  if (next == nullptr) return;
  __builtin_prefetch(next, 1);
  __builtin_prefetch(reinterpret_cast<const char*>(next + 1) - 1, 1);
}

// Rebuilds the index from the records, which are read in order (no random access but the
// index's own).
bool LiveTable::RehashLocked(Shard& shard, std::size_t new_capacity) {
  auto* fresh = memory_.AllocateZeroedArray<std::uint32_t>(new_capacity);  // kEmptyEntry == 0
  if (fresh == nullptr) return false;
  // The records rehashed land on every page of the index: made present at once (prefault.h).
  PrefaultForWrite(fresh, new_capacity * sizeof(std::uint32_t));
  std::size_t mask = new_capacity - 1;
  ForEachRecordLocked(shard.indexed, [&](std::uint32_t position, const Record& record) {
    std::uint64_t hash = HashKey(record.key);
    std::size_t j = hash & mask;
    while (fresh[j] != kEmptyEntry) j = (j + 1) & mask;
    fresh[j] = Tag(hash) | (position + 1);
  });
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
    if ((entry & ~kPositionMask) == tag && position != 0 &&
        At(shard.indexed, position - 1).key == key) {
      return &shard.index[i];
    }
  }
}

bool LiveTable::NewPositionLocked(RecordStore& store, std::uint32_t* position) {
  if (store.free_count != 0) {
    *position = store.free_positions[--store.free_count];
    if (store.free_settled > store.free_count) store.free_settled = store.free_count;
    return true;
  }
  if (store.next_position == kMaxShardObjects) return false;
  // A new chunk when the handed-out positions fill every chunk so far.
  std::uint32_t chunked = 0;
  for (std::uint32_t c = 0; c < store.chunk_count && c < kSmallChunks; ++c) {
    chunked += ChunkCapacity(c);
  }
  if (store.chunk_count > kSmallChunks) {
    chunked += (store.chunk_count - kSmallChunks) * kLargeChunkRecords;
  }
  if (store.next_position == chunked) {
    if (store.chunk_count == store.directory_capacity) {
      std::uint32_t capacity = store.directory_capacity == 0 ? 8 : store.directory_capacity * 2;
      auto* directory = memory_.AllocateArray<Record*>(capacity);
      if (directory == nullptr) return false;
      if (store.chunk_count != 0) {
        std::memcpy(directory, store.chunks, store.chunk_count * sizeof(Record*));
      }
      memory_.DeallocateArray(store.chunks, store.directory_capacity);
      store.chunks = directory;
      store.directory_capacity = capacity;
    }
    Record* chunk = memory_.AllocateArray<Record>(ChunkCapacity(store.chunk_count));
    if (chunk == nullptr) return false;
    // Positions are handed out in order: the chunk's pages will all be written (prefault.h).
    PrefaultForWrite(chunk, ChunkCapacity(store.chunk_count) * sizeof(Record));
    store.chunks[store.chunk_count++] = chunk;
  }
  *position = store.next_position++;
  return true;
}

void LiveTable::FreeLocked(RecordStore& store, std::uint32_t position) {
  --store.used;
  if (store.free_count == store.free_capacity) {
    std::uint32_t capacity = store.free_capacity == 0 ? 1024 : store.free_capacity * 2;
    auto* grown = memory_.AllocateArray<std::uint32_t>(capacity);
    if (grown == nullptr) {
      // Out of memory: the position is never reused, its record marked free at once.
      At(store, position).key = kFreeKey;
      return;
    }
    if (store.free_count != 0) {
      std::memcpy(grown, store.free_positions, store.free_count * sizeof(std::uint32_t));
    }
    memory_.DeallocateArray(store.free_positions, store.free_capacity);
    store.free_positions = grown;
    store.free_capacity = capacity;
  }
  store.free_positions[store.free_count++] = position;
}

// In one pass, so that the records' cache misses overlap rather than each stalling a removal.
void LiveTable::SettleLocked(RecordStore& store) {
  for (std::uint32_t i = store.free_settled; i < store.free_count; ++i) {
    At(store, store.free_positions[i]).key = kFreeKey;
  }
  store.free_settled = store.free_count;
}

LiveTable::InsertResult LiveTable::Insert(std::uint64_t key, const LiveObject& object,
                                          LiveObject* replaced) {
  std::uint64_t hash = HashKey(key);
  Shard& shard = ShardFor(hash);
  MutexLock lock(shard.mutex);
  if (std::uint32_t* existing = FindLocked(shard, key, hash)) {
    Record& record = At(shard.indexed, (*existing & kPositionMask) - 1);
    *replaced = record.object;
    record.object = object;
    Notify(shard, [&](LiveSetObserver& o, std::size_t s) { o.ObjectAdded(s, key, object); });
    return InsertResult::kReplaced;
  }
  // Keep the index's load (entries plus tombstones) under 1/2 so probe sequences stay short; a
  // rehash leaves it at most 3/8 (so growing doubles the index: between 1/4 and 1/2 in use).
  if ((shard.indexed.used + shard.tombstones + 1) * 2 > shard.capacity) {
    std::size_t capacity = 64;
    while ((shard.indexed.used + 1) * 8 > capacity * 3) capacity *= 2;
    if (!RehashLocked(shard, capacity)) return InsertResult::kOutOfMemory;
  }
  std::uint32_t position;
  if (!NewPositionLocked(shard.indexed, &position)) return InsertResult::kOutOfMemory;
  // In the filter first: a key it does not know is one free() never asks about.
  if (!filter_.Insert(key)) {
    FreeLocked(shard.indexed, position);
    ++shard.indexed.used;  // FreeLocked counted a removal
    return InsertResult::kOutOfMemory;
  }
  Record& record = At(shard.indexed, position);
  record.key = key;
  record.object = object;
  std::size_t mask = shard.capacity - 1;
  std::size_t i = hash & mask;
  while (shard.index[i] != kEmptyEntry && shard.index[i] != kTombstone) i = (i + 1) & mask;
  if (shard.index[i] == kTombstone) --shard.tombstones;
  shard.index[i] = Tag(hash) | (position + 1);
  ++shard.indexed.used;
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
  *removed = At(shard.indexed, position).object;
  FreeLocked(shard.indexed, position);
  *entry = kTombstone;
  ++shard.tombstones;
  filter_.Remove(key);
  Notify(shard, [&](LiveSetObserver& o, std::size_t s) { o.ObjectRemoved(s, key); });
  return true;
}

// A handle is (shard << 24 | position) + 1: positions are below 2^24 (kMaxShardObjects).
bool LiveTable::InsertWithHandle(std::uint64_t key, const LiveObject& object, std::uint32_t lane,
                                 std::uint32_t* handle) {
  MutexLock lock(LaneMutex(lane));
  return InsertWithHandleLocked(key, object, lane, handle);
}

bool LiveTable::InsertWithHandleLocked(std::uint64_t key, const LiveObject& object,
                                       std::uint32_t lane, std::uint32_t* handle) {
  Shard& shard = shards_[lane % kShards];
  std::uint32_t position;
  if (!NewPositionLocked(shard.handled, &position)) return false;
  Record& record = At(shard.handled, position);
  record.key = key;
  record.object = object;
  ++shard.handled.used;
  ++shard.handle_counts.inserted;
  shard.next_handled.store(NextRecordLocked(shard.handled), std::memory_order_relaxed);
  const auto s = static_cast<std::uint32_t>(&shard - shards_);
  *handle = ((s << 24) | position) + 1;
  Notify(shard, [&](LiveSetObserver& o, std::size_t i) { o.ObjectAdded(i, key, object); });
  return true;
}

bool LiveTable::RemoveByHandle(std::uint32_t handle, std::uint64_t key, LiveObject* removed) {
  if (handle == 0) return false;
  const std::uint32_t s = (handle - 1) >> 24, position = (handle - 1) & kPositionMask;
  if (s >= kShards) return false;
  Shard& shard = shards_[s];
  MutexLock lock(shard.mutex);
  if (position < shard.handled.first_position || position >= shard.handled.next_position) {
    return false;
  }
  SettleLocked(shard.handled);  // a position freed since the last settle must read as free
  Record& record = At(shard.handled, position);
  if (record.key != key) return false;  // freed, or since reused for another key
  *removed = record.object;
  FreeLocked(shard.handled, position);
  shard.next_handled.store(&record, std::memory_order_relaxed);
  Notify(shard, [&](LiveSetObserver& o, std::size_t i) { o.ObjectRemoved(i, key); });
  return true;
}

bool LiveTable::DropByHandle(std::uint32_t handle, std::uint64_t key) {
  if (handle == 0) return false;
  const std::uint32_t s = (handle - 1) >> 24, position = (handle - 1) & kPositionMask;
  if (s >= kShards) return false;
  Shard& shard = shards_[s];
  MutexLock lock(shard.mutex);
  if (position < shard.handled.first_position || position >= shard.handled.next_position) {
    return false;  // retired by RemoveAll
  }
  FreeLocked(shard.handled, position);
  ++shard.handle_counts.dropped;
  shard.next_handled.store(NextRecordLocked(shard.handled), std::memory_order_relaxed);
  Notify(shard, [&](LiveSetObserver& o, std::size_t i) { o.ObjectRemoved(i, key); });
  return true;
}

std::uint32_t LiveTable::BeginRemoveAllLocked(Shard& shard) {
  // Every handle to a position handed out so far is retired from here on: RemoveAll reports its
  // object, a drop or removal by the handle (a free racing the RemoveAll) finds nothing, and no
  // position below is reused, so a handle from before RemoveAll never finds another object.
  RecordStore& store = shard.handled;
  SettleLocked(store);
  store.free_count = store.free_settled = 0;
  store.first_position = store.next_position;
  shard.next_handled.store(NextRecordLocked(store), std::memory_order_relaxed);
  return store.next_position;
}

std::size_t LiveTable::RemoveSomeLocked(Shard& shard, std::uint32_t handled_end,
                                        LiveObject* batch) {
  std::size_t n = 0;
  const std::size_t s = static_cast<std::size_t>(&shard - shards_);
  ForEachRecordLocked(shard.indexed, [&](std::uint32_t position, const Record& record) {
    if (n == kRemoveBatch) return;
    const std::uint64_t key = record.key;
    batch[n++] = record.object;
    if (std::uint32_t* entry = FindLocked(shard, key, HashKey(key))) {
      *entry = kTombstone;
      ++shard.tombstones;
    }
    filter_.Remove(key);
    FreeLocked(shard.indexed, position);
    if (LiveSetObserver* o = observer_.load(std::memory_order_acquire)) o->ObjectRemoved(s, key);
  });
  ForEachRecordLocked(shard.handled, [&](std::uint32_t position, Record& record) {
    if (n == kRemoveBatch || position >= handled_end) return;
    const std::uint64_t key = record.key;
    batch[n++] = record.object;
    record.key = kFreeKey;  // and never reused (RetireHandledLocked)
    --shard.handled.used;
    if (LiveSetObserver* o = observer_.load(std::memory_order_acquire)) o->ObjectRemoved(s, key);
  });
  return n;
}

void LiveTable::RetireHandledLocked(Shard& shard, std::uint32_t end) {
  // Chunks wholly below `end` hold nothing any more and never will.
  RecordStore& store = shard.handled;
  std::uint32_t position = 0;
  for (std::uint32_t c = 0; c < store.chunk_count; ++c) {
    std::uint32_t n = ChunkCapacity(c);
    if (position + n > end) break;
    if (store.chunks[c] != nullptr) {
      memory_.DeallocateArray(store.chunks[c], n);
      store.chunks[c] = nullptr;
    }
    position += n;
  }
}

LiveTable::HandleCounts LiveTable::CountHandles() const {
  HandleCounts total = {0, 0};
  for (const Shard& shard : shards_) {
    MutexLock lock(const_cast<Mutex&>(shard.mutex));
    total.inserted += shard.handle_counts.inserted;
    total.dropped += shard.handle_counts.dropped;
  }
  return total;
}

std::size_t LiveTable::size() const {
  std::size_t total = 0;
  for (const Shard& shard : shards_) {
    MutexLock lock(const_cast<Mutex&>(shard.mutex));
    total += shard.indexed.used + shard.handled.used;
  }
  return total;
}

void LiveTable::Observe(LiveSetObserver* observer) {
  observer_.store(observer, std::memory_order_release);
  for (std::size_t s = 0; s < kShards; ++s) {
    Shard& shard = shards_[s];
    // Also when detaching: a change made under this lock before the store above may still be
    // telling the old observer; once the lock is ours, none is.
    MutexLock lock(shard.mutex);
    if (observer == nullptr) continue;
    for (RecordStore* store : {&shard.indexed, &shard.handled}) {
      ForEachRecordLocked(*store, [&](std::uint32_t, const Record& r) {
        observer->ObjectAdded(s, r.key, r.object);
      });
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
