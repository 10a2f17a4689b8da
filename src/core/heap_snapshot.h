// HeapSnapshot: a consistent-enough copy of the live set for serialization: every object live when
// its shard was copied, with the stacks pinned so their frames stay readable after the objects
// die. Taking one holds each lock only while copying; the snapshot itself holds no lock, so
// recording goes on while it is serialized. Not thread-safe itself (one serializer uses it).
//
// Two ways to copy (SnapshotGrouping):
//   kBySite      one entry per (stack, size, generation): how many objects, their summed weight,
//                the oldest one's allocation time. That is all a profile shows of them, and it is
//                the size of the profile (a few thousand sites), not of the heap: a 500,000-object
//                heap from 14,000 sites copies 14,000 entries. The preload library's dumps and
//                peak copies, and so the reserve for its final dump, are taken this way.
//   kEachObject  one entry per live object with the key it was recorded under, for a front end
//                that looks at each object (Ruby checks liveness, size and class) or forgets each.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/heap_recorder.h"

namespace heaprec {

enum class SnapshotGrouping { kEachObject, kBySite };

class HeapSnapshot {
 public:
  HeapSnapshot() = default;
  ~HeapSnapshot() { Release(); }
  HeapSnapshot(const HeapSnapshot&) = delete;
  HeapSnapshot& operator=(const HeapSnapshot&) = delete;

  struct Object {
    std::uint64_t key;  // kEachObject: the recorded key, for a front end that checks liveness
                        // itself; kBySite: 0
    StackId stack;
    std::uint32_t generation;
    std::uint64_t size;
    double weight;                // the sum of the objects' weights
    std::uint64_t alloc_time_ns;  // kBySite: the oldest non-zero allocation time of the objects
    // Free for the front end: objects with different tags become different samples, and the
    // writer's SampleLabeler turns a tag into labels (the Ruby front end encodes class and age).
    std::uint64_t tag;
    std::uint64_t count;  // the sampled objects this entry stands for: 1 for kEachObject
  };

  // Returns false (and holds nothing) when the profiler's memory is exhausted.
  bool Take(HeapRecorder& recorder, SnapshotGrouping grouping);
  void Release();

  const Object* objects() const { return objects_; }
  std::size_t object_count() const { return object_count_; }
  // The sampled objects the entries stand for (object_count() for kEachObject).
  std::uint64_t sampled_objects() const;
  // A front end may update sizes and tags in place and drop objects it found dead by moving the
  // survivors to the front and truncating: the copy is the serializer's alone.
  Object* mutable_objects() { return objects_; }
  void Truncate(std::size_t count) {
    if (count < object_count_) object_count_ = count;
  }
  // Adds an entry for objects recorded elsewhere (another recorder: the Ruby front end adds the
  // native blocks the preload library sampled), its stack `frames` (leaf first) interned in this
  // snapshot's recorder and held until Release. `object.stack` is ignored. False when memory ran
  // out (the snapshot is unchanged then). After Take.
  bool AddObject(const std::uint64_t* frames, std::uint32_t depth, Object object);

  const AllocationTotals* history() const { return history_; }
  // A front end may rewrite the history's tags in place (Ruby: its class index becomes the dump's
  // label index), before SortByStackAndSize.
  AllocationTotals* mutable_history() { return history_; }
  std::size_t history_count() const { return history_count_; }
  // What the copy holds in the profiler's memory.
  std::size_t bytes() const {
    return object_capacity_ * sizeof(Object) + history_capacity_ * sizeof(AllocationTotals);
  }
  // The stack's innermost min(depth, capacity) frames, leaf first, copied to `buffer` (stacks are
  // stored as a trie: see StackTable).
  StackFrames Frames(StackId id, std::uint64_t* buffer, std::uint32_t capacity) const {
    return {buffer, recorder_->stacks_.CopyFrames(id, buffer, capacity)};
  }
  // Calls visit(frame) for each frame of the stack, leaf first, until it returns false.
  template <typename Visitor>
  bool ForEachFrame(StackId id, Visitor&& visit) const {
    return recorder_->stacks_.ForEachFrame(id, visit);
  }
  // StackTable::ForEachFrameOnce, `seen` a bitmap of (node_bound() + 63) / 64 words, zeroed before
  // the first stack: a reader of every stack's frames visits the nodes stacks share once.
  template <typename Visitor>
  bool ForEachFrameOnce(StackId id, std::uint64_t* seen, Visitor&& visit) const {
    return recorder_->stacks_.ForEachFrameOnce(id, seen, node_bound_, visit);
  }
  // The stack table's id bound when the stacks were pinned: the nodes of stacks interned later
  // (objects recorded while the live table was copied) may lie beyond it.
  std::uint32_t node_bound() const { return node_bound_; }
  const RecorderStats& stats() const { return stats_; }

  // Sorts objects and history by (stack, size, tag) so a writer can aggregate them in one merge
  // pass.
  void SortByStackAndSize();

 private:
  // Gives back what the copy holds of the recorder (the stacks' pin, AddObject's references) and
  // empties it, keeping its arrays for the next Take.
  void ReleaseStacks();
  bool GrowObjects(std::size_t min_capacity);
  bool CopyHistory(HeapRecorder& recorder);
  bool CopyEachObject(HeapRecorder& recorder);
  bool CopyBySite(HeapRecorder& recorder);
  // kBySite: the entry for (o.stack, o.size, o.generation), made if new; null when out of memory.
  Object* SiteEntry(const LiveObject& o);
  bool GrowSiteIndex();

  HeapRecorder* recorder_ = nullptr;
  // The stacks AddObject interned, each holding one reference.
  StackId* added_stacks_ = nullptr;
  std::size_t added_count_ = 0;
  std::size_t added_capacity_ = 0;
  Object* objects_ = nullptr;
  std::size_t object_count_ = 0;
  std::size_t object_capacity_ = 0;
  AllocationTotals* history_ = nullptr;
  std::size_t history_count_ = 0;
  std::size_t history_capacity_ = 0;
  std::uint32_t node_bound_ = 0;  // see node_bound()
  // kBySite, during Take only: open addressing over the entries, position + 1 (0: empty), load at
  // most 1/2.
  std::uint32_t* site_index_ = nullptr;
  std::size_t site_index_capacity_ = 0;  // a power of two
  RecorderStats stats_ = {};
};

}  // namespace heaprec
