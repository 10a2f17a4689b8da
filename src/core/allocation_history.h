// AllocationHistory: cumulative sampled allocations per (stack, size), from the start of recording.
//
// pprof's alloc_objects / alloc_space count every allocation since the process started, including
// objects long freed, so their stacks must outlive the objects: each (stack, size) entry here holds
// one reference on its stack in the StackTable. Weights are summed as doubles (each sample already
// unbiased by its own weight) and rounded only when written.
//
// Adds are kept pending, a few dozen at a time, and then merged into the table together: each
// entry's slot is fetched ahead of the merge, so the cache misses of a large history (a program
// allocating many sizes from many stacks) overlap instead of each stalling a sample. Until it is
// merged, a pending add holds no reference of its own on its stack: the caller merges (Merge)
// before anything that could free a stack, and before reading the history.
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
  std::uint64_t size;
  double objects;  // sum of weights
  double bytes;    // sum of weight * size
};

class AllocationHistory {
 public:
  explicit AllocationHistory(MemoryResource& memory) : memory_(memory) {}
  ~AllocationHistory();
  AllocationHistory(const AllocationHistory&) = delete;
  AllocationHistory& operator=(const AllocationHistory&) = delete;

  // Keeps one sampled allocation pending; false (nothing done) when kPending are pending already:
  // the caller merges them first.
  bool AddPending(StackId stack, std::uint64_t size, double weight) {
    if (pending_count_ == kPending) return false;
    pending_[pending_count_++] = {stack, size, weight, 0};
    return true;
  }
  // Merges the pending allocations into the table: new_entry(stack) for each that starts a new
  // (stack, size) entry (the caller then owes it a reference on the stack), dropped() for each
  // lost to exhausted memory.
  template <typename NewEntry, typename Dropped>
  void Merge(NewEntry&& new_entry, Dropped&& dropped);

  // Copies every merged entry into `out` (capacity `capacity`); returns how many were copied.
  std::size_t CopyTo(AllocationTotals* out, std::size_t capacity) const;
  std::size_t size() const { return used_; }  // merged entries

  static constexpr std::size_t kPending = 64;

 private:
  // Makes room for `more` entries at a load of at most 1/2.
  bool Reserve(std::size_t more);
  // Adds to the (stack, size) entry; true when it is new. There must be room.
  bool AddMerged(const AllocationTotals& add);

  MemoryResource& memory_;
  AllocationTotals* slots_ = nullptr;  // stack == kInvalidStackId marks an empty slot
  std::size_t capacity_ = 0;
  std::size_t used_ = 0;
  AllocationTotals pending_[kPending];  // `objects` is the sample's weight; `bytes` unused
  std::size_t pending_count_ = 0;
  std::size_t SlotOf(StackId stack, std::uint64_t size) const;
};

template <typename NewEntry, typename Dropped>
void AllocationHistory::Merge(NewEntry&& new_entry, Dropped&& dropped) {
  const std::size_t n = pending_count_;
  pending_count_ = 0;
  if (n == 0) return;
  if (!Reserve(n)) {
    for (std::size_t i = 0; i < n; ++i) dropped();
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    __builtin_prefetch(&slots_[SlotOf(pending_[i].stack, pending_[i].size)], 1);
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (AddMerged(pending_[i])) new_entry(pending_[i].stack);
  }
}

}  // namespace heaprec
