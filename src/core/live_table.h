// LiveTable: the sampled objects that are still alive, by key.
//
// A key is whatever identifies an object to its front end (a block address, a runtime's object id);
// keys 0 and UINT64_MAX are reserved. Each live object remembers its stack, the size the program
// asked for, its weight (how many objects it stands for, fixed at sample time) and when it was
// allocated.
//
//   filter_ (SampledKeyFilter)   lock-free "maybe tracked?" in front of everything
//   shards_[kShards]             each: Mutex + open-addressing table (linear probing, tombstones)
//
// Thread safety: every call is thread-safe. MayContain() is lock-free; the rest lock one shard for
// a few dozen instructions. Nothing here calls malloc; memory comes from the MemoryResource.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/memory_resource.h"
#include "core/mutex.h"
#include "core/sampled_key_filter.h"
#include "core/stack_table.h"

namespace heaprec {

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
  explicit LiveTable(MemoryResource& memory) : memory_(memory) {}
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

  // Calls visit(key, object) for every live object, one shard at a time under that shard's lock.
  // The visitor must be short and must not call back into this table.
  template <typename Visitor>
  void ForEach(Visitor&& visit);

  std::size_t size() const;

  void LockAllForFork();
  void UnlockAllAfterForkInParent();
  void ResetAllAfterForkInChild();

 private:
  static constexpr std::uint64_t kEmpty = 0;
  static constexpr std::uint64_t kTombstone = ~std::uint64_t{0};
  static constexpr int kShardBits = 5;
  static constexpr std::size_t kShards = std::size_t{1} << kShardBits;

  struct Slot {
    std::uint64_t key;
    LiveObject object;
  };
  struct Shard {
    Mutex mutex;
    Slot* slots = nullptr;
    std::size_t capacity = 0;  // power of two
    std::size_t used = 0;      // live entries
    std::size_t tombstones = 0;
    char padding[64];  // keep shards' hot fields on separate cache lines
  };

  static std::uint64_t HashKey(std::uint64_t key);
  Shard& ShardFor(std::uint64_t hash) { return shards_[hash >> (64 - kShardBits)]; }
  bool RehashLocked(Shard& shard, std::size_t new_capacity);
  Slot* FindLocked(Shard& shard, std::uint64_t key, std::uint64_t hash);

  MemoryResource& memory_;
  SampledKeyFilter filter_;
  Shard shards_[kShards];
};

template <typename Visitor>
void LiveTable::ForEach(Visitor&& visit) {
  for (Shard& shard : shards_) {
    MutexLock lock(shard.mutex);
    for (std::size_t i = 0; i < shard.capacity; ++i) {
      const Slot& slot = shard.slots[i];
      if (slot.key != kEmpty && slot.key != kTombstone) visit(slot.key, slot.object);
    }
  }
}

}  // namespace heaprec
