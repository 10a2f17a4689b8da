// SampledKeyFilter: a lock-free "might this key be tracked?" test for the free() fast path where
// blocks carry no tag (another allocator than glibc; src/preload/tagged_blocks.h says why), and for
// the Ruby front end's free hint.
//
// Nearly every free() is of an unsampled block, so the question must be answered without a lock and
// almost always from cache. This is a counting filter: 64 Ki one-byte counters (64 KiB, fits in
// L2), one per hash bucket of keys. Insert increments the key's counter, Remove decrements it; a
// zero counter proves the key is not tracked. At the default interval a program holding 1 GiB has
// ~2,000 live samples, so ~3% of counters are non-zero and a free of an unsampled block takes the
// lock that rarely.
//
// A counter that reaches 255 sticks there (it can no longer be decremented correctly): the filter
// then only answers "maybe" for that bucket, which costs a lookup, never a wrong answer.
//
// The counters are allocated with the first Insert (zeroed, from the MemoryResource): over glibc
// the preload library never inserts, and 64 KiB cleared by every process's start-up would be 16
// pages touched for nothing.
//
// Thread safety: all calls are lock-free; MayContain and Remove are signal-safe, Insert allocates
// the first time. Correctness relies on the allocator's own
// ordering: a block is inserted before its address is returned to the program and removed before
// the block is handed back to the allocator, so Insert and Remove of one key never race.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/hash.h"
#include "core/memory_resource.h"

namespace heaprec {

class SampledKeyFilter {
 public:
  explicit SampledKeyFilter(MemoryResource& memory) : memory_(memory) {}
  ~SampledKeyFilter();
  SampledKeyFilter(const SampledKeyFilter&) = delete;
  SampledKeyFilter& operator=(const SampledKeyFilter&) = delete;

  bool MayContain(std::uint64_t key) const {
    const std::atomic<std::uint8_t>* counters = counters_.load(std::memory_order_acquire);
    return counters != nullptr && counters[Slot(key)].load(std::memory_order_relaxed) != 0;
  }
  // False when the counters could not be allocated (out of memory): the key is not tracked.
  bool Insert(std::uint64_t key);
  void Remove(std::uint64_t key);

 private:
  static constexpr int kSlotBits = 16;
  static constexpr std::size_t kSlots = std::size_t{1} << kSlotBits;
  static constexpr std::uint8_t kStuck = 255;
  // Fibonacci hashing: one multiply, the top bits are well mixed.
  static std::uint32_t Slot(std::uint64_t key) {
    return static_cast<std::uint32_t>((key * 0x9e3779b97f4a7c15ULL) >> (64 - kSlotBits));
  }
  std::atomic<std::uint8_t>* Counters();

  MemoryResource& memory_;
  std::atomic<std::atomic<std::uint8_t>*> counters_{nullptr};
};

}  // namespace heaprec
