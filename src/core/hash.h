// Hash mixing shared by the recorder's tables. Header-only, no state, signal-safe.
#pragma once

#include <cstdint>

namespace heaprec {

// A fast finalizer (from Murmur3's fmix64 shape): every input bit affects every output bit, so the
// low bits of aligned addresses (always zero) do not cluster entries.
inline std::uint64_t MixBits(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

// A key of two 32-bit fields and a size (stack and tag, stack and generation, with a size): the
// fields fill one word, the size times an odd constant (a bijection) is xored in, and one finalizer
// mixes it. Keys with the same low field and sizes below 4 GiB never share a hash (the packing and
// the finalizer are both one-to-one), and it is a third of the instructions of combining the fields
// one finalizer at a time.
inline std::uint64_t HashSizedKey(std::uint32_t high, std::uint32_t low, std::uint64_t size) {
  return MixBits((std::uint64_t{high} << 32 | low) ^ size * 0x9e3779b97f4a7c15ULL);
}

}  // namespace heaprec
