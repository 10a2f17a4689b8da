// The Ruby front end profile of test_support::MakeRubyProfile at sample_every 100: its per-object
// variances, and a profile grown from it, for the tests of the report and the diff on Ruby
// profiles.
#pragma once

#include <cstdint>

#include "test_profiles.h"

namespace heaprec::test_support::ruby {

constexpr int64_t kEvery = 100;

// Per-object variance of `objects` estimated objects of `size` bytes: N·(w-1)·s², w = kEvery.
constexpr double BytesVariance(int64_t objects, int64_t size) {
  return static_cast<double>(objects) * (kEvery - 1) * static_cast<double>(size * size);
}
// The samples of MakeRubyProfile(kEvery).
constexpr double kVarA = BytesVariance(300, 40), kVarB = BytesVariance(200, 60),
                 kVarC = BytesVariance(100, 1000), kVarD = BytesVariance(100, 40);

// NEW has ten times as many Array objects at Cache#fill line 15 (B): +108000 bytes, well beyond
// the per-object noise; everything else is unchanged.
inline Profile GrownProfile() {
  Profile p = MakeRubyProfile(kEvery);
  p.samples[1].values = {2000, 2000 * 60};
  return p;
}

}  // namespace heaprec::test_support::ruby
