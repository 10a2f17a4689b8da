// Per-object sampling for a language runtime's allocations: each object is sampled independently
// with probability 1/N and then stands for exactly N objects (the Horvitz-Thompson weight), so
// counts and sizes summed over sampled objects are unbiased whatever the object sizes.
//
// Instead of a coin flip per object the sampler draws the gap to the next sampled object from the
// geometric distribution (the discrete analogue of the byte sampler's exponential gaps), so the
// unsampled path is one decrement and one test. Random gaps, rather than "every Nth object", keep
// a program that allocates in a fixed rhythm (two objects per loop iteration, say) from having one
// of its sites always sampled and another never.
//
// N = 1 samples every object with weight 1: exact counts.
#pragma once

#include <cstdint>

#include "core/sampler.h"

namespace heaprec {

class ObjectSampler {
 public:
  // `every` is N (0 is treated as 1); `seed` may be anything (a fixed one makes runs repeatable).
  void Configure(std::uint64_t every, std::uint64_t seed);

  // Whether this object is sampled. No locks, no allocation.
  bool ShouldSample() {
    if (--objects_until_sample_ > 0) return false;
    objects_until_sample_ = NextGap();
    return true;
  }

  std::uint64_t every() const { return every_; }
  double weight() const { return static_cast<double>(every_); }

  // Draws the number of objects up to and including the next sampled one: Geometric(1/N), >= 1.
  std::int64_t NextGap();

 private:
  std::uint64_t every_ = 1;
  std::int64_t objects_until_sample_ = 1;
  SamplerState rng_ = {0, 1};
};

}  // namespace heaprec
