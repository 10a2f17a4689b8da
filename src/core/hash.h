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

inline std::uint64_t HashCombine(std::uint64_t seed, std::uint64_t value) {
  return MixBits(seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2)));
}

}  // namespace heaprec
