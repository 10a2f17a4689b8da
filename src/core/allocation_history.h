// AllocationHistory: cumulative sampled allocations per (stack, size, tag), from the start of
// recording. The tag is the front end's: 0 for the native profiler, the object's class for Ruby
// (which cannot know an object's size when it is allocated, and records size 0).
//
// pprof's alloc_objects / alloc_space count every allocation since the process started, including
// objects long freed, so their stacks must outlive the objects: each (stack, size, tag) entry holds
// one reference on its stack in the StackTable. Weights are summed as doubles (each sample already
// unbiased by its own weight) and rounded only when written.
//
// Adds come in batches (Merge): the recorder keeps each thread's adds pending and merges a few
// dozen at a time, each entry's slot fetched ahead of the merge, so that the cache misses of a
// large history (a program allocating many sizes from many stacks) overlap instead of each
// stalling a sample.
//
// Thread safety: not synchronized; the recorder's stack lock covers every call. No malloc, no
// throw.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/memory_resource.h"
#include "core/stack_table.h"

namespace heaprec {

struct AllocationTotals {
  StackId stack;
  // Sampled objects of this (stack, size) that were temporary: freed by their thread before it
  // allocated anything else (HeapRecorder::CountTemporary). A count of samples, not of weights: in
  // what would be padding, and every sample of one (stack, size) has the same weight while the
  // interval stays (the encoder multiplies).
  std::uint32_t temporary;
  std::uint64_t size;
  double objects;     // sum of weights
  double bytes;       // sum of weight * size
  std::uint32_t tag;  // the front end's (HeapRecorder::Record's history_tag): part of the key
};

class AllocationHistory {
 public:
  explicit AllocationHistory(MemoryResource& memory) : memory_(memory) {}
  ~AllocationHistory();
  AllocationHistory(const AllocationHistory&) = delete;
  AllocationHistory& operator=(const AllocationHistory&) = delete;

  // Adds `count` sampled allocations (`objects` of each is its weight, `temporary` its temporary
  // samples; `bytes` is ignored):
  // new_entry(stack) for each that starts a new (stack, size, tag) entry (the caller then owes it a
  // reference on the stack), dropped() for each lost to exhausted memory.
  template <typename NewEntry, typename Dropped>
  void Merge(const AllocationTotals* adds, std::size_t count, NewEntry&& new_entry,
             Dropped&& dropped);

  // Copies every entry into `out` (capacity `capacity`); returns how many were copied.
  std::size_t CopyTo(AllocationTotals* out, std::size_t capacity) const;
  std::size_t size() const { return used_; }
  // Forgets every entry and gives the table back (no allocation: a fork child's handler calls it;
  // the next Merge makes a new one). The stacks keep the references their entries held: the caller
  // decides what they are still for.
  void Clear();

 private:
  // Makes room for `more` entries at a load of at most 1/2.
  bool Reserve(std::size_t more);
  // Adds to the (stack, size, tag) entry, probing from its home slot (SlotOf); true when it is
  // new. There must be room.
  bool AddMerged(const AllocationTotals& add, std::size_t home);

  // How many adds have their slots fetched ahead at once: the recorder merges 32 at a time.
  static constexpr std::size_t kMergeBatch = 32;

  MemoryResource& memory_;
  AllocationTotals* slots_ = nullptr;  // stack == kInvalidStackId marks an empty slot
  std::size_t capacity_ = 0;
  std::size_t used_ = 0;
  std::size_t SlotOf(const AllocationTotals& key) const;
};

template <typename NewEntry, typename Dropped>
void AllocationHistory::Merge(const AllocationTotals* adds, std::size_t count, NewEntry&& new_entry,
                              Dropped&& dropped) {
  if (count == 0) return;
  if (!Reserve(count)) {
    for (std::size_t i = 0; i < count; ++i) dropped();
    return;
  }
  // Each entry's home slot is computed once: fetched ahead in the first pass, probed from in the
  // second.
  std::size_t home[kMergeBatch];
  for (std::size_t base = 0; base < count; base += kMergeBatch) {
    const std::size_t n = count - base < kMergeBatch ? count - base : kMergeBatch;
    for (std::size_t i = 0; i < n; ++i) {
      home[i] = SlotOf(adds[base + i]);
      __builtin_prefetch(&slots_[home[i]], 1);
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (AddMerged(adds[base + i], home[i])) new_entry(adds[base + i].stack);
    }
  }
}

}  // namespace heaprec
