// AllocationHistory: cumulative sampled allocations per (stack, size), from the start of recording.
//
// pprof's alloc_objects / alloc_space count every allocation since the process started, including
// objects long freed, so their stacks must outlive the objects: each (stack, size) entry here holds
// one reference on its stack in the StackTable. Weights are summed as doubles (each sample already
// unbiased by its own weight) and rounded only when written.
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

  // Adds one sampled allocation. Returns true when this (stack, size) is new: the caller then owes
  // the entry a reference on the stack. False also when out of memory (*dropped is set then).
  bool Add(StackId stack, std::uint64_t size, double weight, bool* dropped);

  // Copies every entry into `out` (capacity `capacity`); returns how many were copied.
  std::size_t CopyTo(AllocationTotals* out, std::size_t capacity) const;
  std::size_t size() const { return used_; }

 private:
  bool Grow();

  MemoryResource& memory_;
  AllocationTotals* slots_ = nullptr;  // stack == kInvalidStackId marks an empty slot
  std::size_t capacity_ = 0;
  std::size_t used_ = 0;
};

}  // namespace heaprec
