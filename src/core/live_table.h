// LiveTable: the sampled objects that are still alive, by key.
//
// A key is whatever identifies an object to its front end (a block address, a runtime's object id);
// keys 0 and UINT64_MAX are reserved. Each live object remembers its stack, the size the program
// asked for, its weight (how many objects it stands for, fixed at sample time) and when it was
// allocated.
//
//   filter_ (SampledKeyFilter)   lock-free "maybe tracked?" in front of the indexed objects
//   shards_[kShards]             each: Mutex + a compact index over densely stored records, and
//                                records found by handle only
//
// A shard keeps its records (key + LiveObject, 40 bytes) densely, in chunks that never move, and
// finds them through an open-addressing index of 4-byte entries (linear probing, tombstones, load
// at most 1/2). An entry holds the record's position (24 bits) and 8 bits of the key's hash, so a
// probe reads a record only when those bits match. A removed record's position goes on a stack of
// free positions (4 bytes each, apart from the records) and is reused by the next insert; its
// record is not touched when it is removed, only marked free (its key cleared) in a batch before
// the records are next read in order (ForEach, a rehash), so that a removal reads and writes no
// record of its own. Memory per live object: 40 bytes of record plus 8-16 bytes of index (its load
// between 1/4 and 1/2), plus at most one partly filled chunk per shard (16 KiB); see
// docs/design/memory-layout.md. A shard holds at most kMaxShardObjects objects (about 537 million
// in all); past that, inserts fail as if memory were exhausted.
//
// Objects inserted with a handle (InsertWithHandle) are stored the same way but indexed nowhere,
// not even in the filter: the front end keeps the handle with the object (the preload library in a
// sampled block's header) and removes it by that handle, so neither insert nor remove looks the
// key up (in exact mode the index and the filter were a cache miss each on every malloc and free
// of a large heap). DropByHandle removes without reading the record at all: the front end keeps
// what it needs of the object beside the handle (HeapRecorder's ObjectTicket). The front end
// vouches that a key is never inserted twice while live, and that a handle is dropped once.
// RemoveAll retires the positions it empties for good: a handle from before it (a block sampled
// before a detach and freed after it) then finds nothing, never another object.
//
// Thread safety: every call is thread-safe. MayContain() is lock-free; the rest lock one shard for
// a few dozen instructions. Nothing here calls malloc; memory comes from the MemoryResource.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/memory_resource.h"
#include "core/mutex.h"
#include "core/sampled_key_filter.h"
#include "core/stack_table.h"

namespace heaprec {

class LiveSetObserver;  // live_set_observer.h

struct LiveObject {
  StackId stack;
  // A front end's clock of its own at allocation (Ruby: the GC count, for the object's age); 0 for
  // native blocks. It fills what would otherwise be padding after `stack`.
  std::uint32_t generation;
  std::uint64_t size;           // bytes requested by the program
  double weight;                // objects this sample stands for (1 / sampling probability)
  std::uint64_t alloc_time_ns;  // CLOCK_REALTIME at allocation
};

class LiveTable {
 public:
  explicit LiveTable(MemoryResource& memory) : memory_(memory), filter_(memory) {}
  ~LiveTable();
  LiveTable(const LiveTable&) = delete;
  LiveTable& operator=(const LiveTable&) = delete;

  bool MayContain(std::uint64_t key) const { return filter_.MayContain(key); }

  enum class InsertResult { kInserted, kReplaced, kOutOfMemory };
  // Inserts `object` under `key`. If the key was already present (a free the front end never saw),
  // the old object is replaced and returned in *replaced.
  InsertResult Insert(std::uint64_t key, const LiveObject& object, LiveObject* replaced);
  // Removes the key; returns whether it was present, and the object in *removed.
  bool Remove(std::uint64_t key, LiveObject* removed);

  // Inserts `object` under `key` where only *handle (never 0) finds it: no lookup, no index, no
  // filter entry. The caller must not insert a key again while it is live. `lane` picks the shard:
  // the calling thread's number, so that threads inserting at once take different locks and write
  // different cache lines (the handle names the shard: any thread may remove the object). False
  // when out of memory or positions.
  bool InsertWithHandle(std::uint64_t key, const LiveObject& object, std::uint32_t lane,
                        std::uint32_t* handle);
  // The same for a caller that holds LaneMutex(lane), having more to do under it (the recorder's
  // lane cache, which that lock also guards: one lock taken per record instead of two).
  bool InsertWithHandleLocked(std::uint64_t key, const LiveObject& object, std::uint32_t lane,
                              std::uint32_t* handle);
  // The lock of `lane`'s shard.
  Mutex& LaneMutex(std::uint32_t lane) { return shards_[lane % kShards].mutex; }
  // How many objects InsertWithHandle inserted and DropByHandle removed so far (counted under the
  // shard locks the two take anyway).
  struct HandleCounts {
    std::uint64_t inserted, dropped;
  };
  HandleCounts CountHandles() const;
  // Fetches the record the next InsertWithHandle in `lane` is likely to write into the CPU's
  // cache, for a caller that has other work to do first: the write then does not stall (on a large
  // heap that record has long left the caches). A hint only. Lock-free.
  void PrefetchInsertWithHandle(std::uint32_t lane) const;
  // Removes what InsertWithHandle stored at `handle`, if it still holds `key`: false (nothing
  // done) when it does not, e.g. a handle from before RemoveAll. Reads the record.
  bool RemoveByHandle(std::uint32_t handle, std::uint64_t key, LiveObject* removed);
  // Removes what InsertWithHandle stored at `handle` (for `key`, which the observer is told)
  // without reading its record: the caller keeps what it needs of the object. False (nothing done)
  // for a handle from before RemoveAll. The caller must drop each handle at most once.
  bool DropByHandle(std::uint32_t handle, std::uint64_t key);

  // Removes every object, calling gone(object) for each after its shard's lock is released (in
  // batches: the callback may take other locks); an object inserted with a handle while it runs
  // may stay. No malloc.
  template <typename Gone>
  void RemoveAll(Gone&& gone);

  // Calls visit(key, object) for every live object, one shard at a time under that shard's lock.
  // The visitor must be short and must not call back into this table.
  template <typename Visitor>
  void ForEach(Visitor&& visit);

  std::size_t size() const;

  // Tells `observer` (or nobody, for null) of every change from now on, and then, shard by shard
  // under each shard's lock, of every object already live: the observer's copy is exact from the
  // moment its shard is replayed. Detaching (null) passes through every shard's lock: on return no
  // call to the old observer is in flight, and none will be made.
  void Observe(LiveSetObserver* observer);

  static constexpr std::size_t shard_count() { return kShards; }

  // The most objects one shard can hold.
  static constexpr std::uint32_t kMaxShardObjects = (1u << 24) - 2;

  void LockAllForFork();
  void UnlockAllAfterForkInParent();
  void ResetAllAfterForkInChild();

 private:
  static constexpr std::uint64_t kFreeKey = 0;  // a free record
  static constexpr int kShardBits = 5;
  static constexpr std::size_t kShards = std::size_t{1} << kShardBits;

  // Index entries: 0 empty, kTombstone removed, else (hash tag << 24) | (position + 1).
  static constexpr std::uint32_t kEmptyEntry = 0;
  static constexpr std::uint32_t kTombstone = 0xff000000u;
  static constexpr std::uint32_t kPositionMask = (1u << 24) - 1;

  struct Record {
    std::uint64_t key;  // kFreeKey: free (once settled, see RecordStore::free_settled)
    LiveObject object;
  };
  // Records in chunks that never move, a free list threaded through the free ones.
  // Chunk c holds ChunkCapacity(c) records: 4 and 8 KiB for the first two, so a shard with few
  // objects stays small, then 16 KiB each, so the last, partly filled chunk of each shard wastes
  // at most 16 KiB (512 KiB over all shards). All are arena size classes.
  static constexpr std::uint32_t kSmallChunks = 2;
  static constexpr std::uint32_t kLargeChunkRecords = 16384 / sizeof(Record);
  static constexpr std::uint32_t ChunkCapacity(std::uint32_t c) {
    return c < kSmallChunks ? (4096u << c) / sizeof(Record) : kLargeChunkRecords;
  }

  struct RecordStore {
    Record** chunks = nullptr;  // chunk directory; null for a chunk wholly below first_position
    std::uint32_t chunk_count = 0;
    std::uint32_t directory_capacity = 0;
    std::uint32_t next_position = 0;   // positions below this have been handed out
    std::uint32_t first_position = 0;  // positions below this were retired by RemoveAll
    // Free positions, reused last in first out. Those from free_settled up still hold their
    // object's key in their record: SettleLocked clears it before the records are read in order.
    std::uint32_t* free_positions = nullptr;
    std::uint32_t free_count = 0;
    std::uint32_t free_capacity = 0;
    std::uint32_t free_settled = 0;
    std::size_t used = 0;  // live objects
  };

  struct alignas(64) Shard {  // a cache line of its own for each shard's hot fields
    Mutex mutex;
    RecordStore indexed;  // found through `index`
    std::uint32_t* index = nullptr;
    std::size_t capacity = 0;  // index entries, a power of two
    std::size_t tombstones = 0;
    RecordStore handled;  // found by handle only
    // The record the next InsertWithHandle will write (PrefetchInsertWithHandle), null when it
    // needs a new chunk; kept under the lock, read without it.
    std::atomic<Record*> next_handled{nullptr};
    HandleCounts handle_counts = {0, 0};
  };

  static std::uint64_t HashKey(std::uint64_t key);
  static std::uint32_t Tag(std::uint64_t hash) {
    // Bits 48-55: the top bits pick the shard (ShardFor) and the low ones the index position.
    return static_cast<std::uint32_t>((hash >> 48) & 0xff) << 24;
  }
  Shard& ShardFor(std::uint64_t hash) { return shards_[hash >> (64 - kShardBits)]; }
  // The chunk holding `position`, and its place there in *offset.
  static std::uint32_t ChunkOf(std::uint32_t position, std::uint32_t* offset);
  static Record& At(const RecordStore& store, std::uint32_t position);
  // The record the store's next new position will be, null when that needs a new chunk.
  static Record* NextRecordLocked(const RecordStore& store);
  bool RehashLocked(Shard& shard, std::size_t new_capacity);
  // The index entry holding `key`, or null.
  std::uint32_t* FindLocked(Shard& shard, std::uint64_t key, std::uint64_t hash);
  // A free record position, or false when out of memory or positions.
  bool NewPositionLocked(RecordStore& store, std::uint32_t* position);
  // Puts `position` on the free positions, leaving its record as it is.
  void FreeLocked(RecordStore& store, std::uint32_t position);
  // Marks the records of the positions freed since the last call free.
  static void SettleLocked(RecordStore& store);
  // Calls visit(position, record) for each live record of `store`.
  template <typename Visitor>
  static void ForEachRecordLocked(RecordStore& store, Visitor&& visit);
  void DeallocateStore(RecordStore& store);
  // Removes up to kRemoveBatch of the shard's objects into `batch`: any of its indexed ones, and
  // handled ones at positions below `handled_end`, whose positions are not reused. Returns how
  // many.
  static constexpr std::size_t kRemoveBatch = 256;
  std::size_t RemoveSomeLocked(Shard& shard, std::uint32_t handled_end, LiveObject* batch);
  // RemoveAll's start and end for one shard: retires the handled positions handed out so far
  // (those it removes) and returns their end; then frees their memory.
  std::uint32_t BeginRemoveAllLocked(Shard& shard);
  void RetireHandledLocked(Shard& shard, std::uint32_t end);
  // Calls tell(observer, shard index) if an observer is attached. Under `shard`'s lock.
  template <typename Tell>
  void Notify(const Shard& shard, Tell&& tell) {
    if (LiveSetObserver* o = observer_.load(std::memory_order_acquire)) {
      tell(*o, static_cast<std::size_t>(&shard - shards_));
    }
  }

  MemoryResource& memory_;
  SampledKeyFilter filter_;
  // Each on a cache line of its own: the observer is read on every change, and each shard's lock
  // is written by the threads of its lanes.
  alignas(64) std::atomic<LiveSetObserver*> observer_{nullptr};  // read under a shard lock
  alignas(64) Shard shards_[kShards];
};

template <typename Visitor>
void LiveTable::ForEachRecordLocked(RecordStore& store, Visitor&& visit) {
  SettleLocked(store);
  std::uint32_t position = 0;
  for (std::uint32_t c = 0; c < store.chunk_count && position < store.next_position; ++c) {
    Record* chunk = store.chunks[c];
    std::uint32_t n = ChunkCapacity(c);
    if (n > store.next_position - position) n = store.next_position - position;
    if (chunk != nullptr) {
      for (std::uint32_t i = 0; i < n; ++i) {
        if (chunk[i].key != kFreeKey) visit(position + i, chunk[i]);
      }
    }
    position += n;
  }
}

template <typename Visitor>
void LiveTable::ForEach(Visitor&& visit) {
  for (Shard& shard : shards_) {
    MutexLock lock(shard.mutex);
    for (RecordStore* store : {&shard.indexed, &shard.handled}) {
      ForEachRecordLocked(*store, [&](std::uint32_t, const Record& r) { visit(r.key, r.object); });
    }
  }
}

template <typename Gone>
void LiveTable::RemoveAll(Gone&& gone) {
  LiveObject batch[kRemoveBatch];
  for (Shard& shard : shards_) {
    std::uint32_t handled_end;
    {
      MutexLock lock(shard.mutex);
      handled_end = BeginRemoveAllLocked(shard);
    }
    for (std::size_t n = kRemoveBatch; n == kRemoveBatch;) {
      {
        MutexLock lock(shard.mutex);
        n = RemoveSomeLocked(shard, handled_end, batch);
      }
      for (std::size_t i = 0; i < n; ++i) gone(batch[i]);
    }
    MutexLock lock(shard.mutex);
    RetireHandledLocked(shard, handled_end);
  }
}

}  // namespace heaprec
