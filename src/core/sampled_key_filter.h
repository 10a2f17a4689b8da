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
// Thread safety: all calls are lock-free and signal-safe. Correctness relies on the allocator's own
// ordering: a block is inserted before its address is returned to the program and removed before
// the block is handed back to the allocator, so Insert and Remove of one key never race.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/hash.h"

namespace heaprec {

class SampledKeyFilter {
 public:
  bool MayContain(std::uint64_t key) const {
    return counters_[Slot(key)].load(std::memory_order_relaxed) != 0;
  }
  void Insert(std::uint64_t key);
  void Remove(std::uint64_t key);

 private:
  static constexpr int kSlotBits = 16;
  static constexpr std::uint8_t kStuck = 255;
  // Fibonacci hashing: one multiply, the top bits are well mixed.
  static std::uint32_t Slot(std::uint64_t key) {
    return static_cast<std::uint32_t>((key * 0x9e3779b97f4a7c15ULL) >> (64 - kSlotBits));
  }
  std::atomic<std::uint8_t> counters_[1u << kSlotBits] = {};
};

}  // namespace heaprec
