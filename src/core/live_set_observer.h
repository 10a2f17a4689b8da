// LiveSetObserver: told of every change to a HeapRecorder's live set and of every stack node it
// creates, at the moment it happens and under the lock that orders it, so that a copy kept outside
// the recorder (the preload library's heap record, preload/record/heap_record.h: a file mapping
// the kernel keeps when the process is killed) is the live set at every instant.
//
// Calls come from the allocating threads, under a live-table shard lock (object changes, one shard
// at a time: the same shard's changes never overlap) or under the recorder's stack lock (nodes).
// An observer must not call back into the recorder, block, or call malloc.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/live_table.h"
#include "core/stack_table.h"

namespace heaprec {

class LiveSetObserver {
 public:
  // `key` is live with `object` (new, or replacing what the key held). Under shard `shard`'s lock.
  virtual void ObjectAdded(std::size_t shard, std::uint64_t key, const LiveObject& object) = 0;
  // `key` is no longer live. Under shard `shard`'s lock.
  virtual void ObjectRemoved(std::size_t shard, std::uint64_t key) = 0;
  // Node `id` now stands for `frame` under `parent` (kInvalidStackId for the root). Ids are reused
  // once a node is free: the latest call for an id is the one that counts. Under the stack lock.
  virtual void NodeCreated(StackId id, StackId parent, std::uint64_t frame) = 0;

 protected:
  ~LiveSetObserver() = default;
};

}  // namespace heaprec
