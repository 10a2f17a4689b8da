// Per-byte Poisson sampling of allocations, and the weight that unbiases each sample.
//
// The model. Think of the program's allocated bytes as one long line, each allocation of n bytes
// taking n + 1 positions (the +1 lets zero-byte allocations be sampled too). Sample points are a
// Poisson process on that line with rate 1/T, T = the sampling interval: the distance from one
// point to the next is exponential with mean T. An allocation is sampled when at least one point
// falls inside its n + 1 positions, which happens with probability
//
//     p(n) = 1 - exp(-(n + 1) / T).
//
// The front end keeps the distance to the next point as a per-thread countdown (SamplerState): each
// allocation subtracts n + 1 (Sampler::Account) and, when the countdown reaches zero or below, the
// allocation is sampled and a fresh distance is drawn (Sampler::DrawNextPoint). Because the
// exponential distribution is memoryless, a fresh draw after each sample is the same process as
// carrying the remainder over.
//
// The estimator. A sampled object stands for 1/p(n) objects of its size (the Horvitz-Thompson
// estimator, the one Go's runtime uses: 1 / (1 - exp(-size/T)), with size + 1 here to match the
// countdown). Summing 1/p over sampled objects estimates the count, and n/p the bytes, without bias
// for every site whatever its size mix: E[sum over objects of X_i / p_i] = sum of p_i / p_i = the
// true count. The weight is computed per object at sample time (the interval may change later) and
// only then aggregated.
//
// Exact mode: T = 1 samples every allocation with weight 1, so the numbers are exact.
#pragma once

#include <cstddef>
#include <cstdint>

#include "schema/sampling_weight.h"

namespace heaprec {

// The per-thread part of the sampler. Plain data so a front end can keep it in initial-exec TLS.
struct SamplerState {
  // Bytes left until the next sample point. Unsigned: the fast path subtracts and tests for a
  // borrow or zero, which is one `sub` and one `jbe` (Account).
  std::uint64_t bytes_until_sample;
  // xorshift64* state; never zero once seeded.
  std::uint64_t rng;
};

class Sampler {
 public:
  static constexpr std::uint64_t kDefaultInterval = 512 * 1024;
  // The longest distance NextDistance draws: far beyond any real allocation stream.
  static constexpr std::int64_t kMaxDistance = 4'000'000'000'000'000'000;
  // Seeds `state` (from `seed`, which may be anything, e.g. the thread id mixed with the time) and
  // draws the first distance. May be called from any context: no locks, no allocation, signal-safe.
  static void Seed(SamplerState& state, std::uint64_t seed, std::uint64_t interval);

  // Draws the distance in bytes to the next sample point: ceil(Exp(mean = interval)), at least 1
  // and at most kMaxDistance; 0 in exact mode so that every allocation is sampled. Signal-safe, no
  // locks, no allocation.
  static std::int64_t NextDistance(SamplerState& state, std::uint64_t interval);

  // The number of objects one sampled object of `size` bytes stands for: 1 / p(size). 1 in exact
  // mode. The formula is the schema's, which the CLI's error bars assume too.
  static double Weight(std::uint64_t size, std::uint64_t interval) {
    return schema::PerByteSampleWeight(size, interval);
  }

  // The countdown: takes an allocation of `size` bytes off it and says whether a sample point falls
  // inside the allocation (the countdown reached zero or below). The caller then decides what
  // becomes of the sample and draws the next point (DrawNextPoint). The one implementation, which
  // the preload library's allocation hooks inline (a subtraction and a branch, no call) and the
  // tests drive. Signal-safe, no locks, no allocation.
  static bool Account(SamplerState& state, std::uint64_t size) {
    // size + 1 wraps to 0 for SIZE_MAX only: malloc(SIZE_MAX) allocates nothing (it fails with
    // ENOMEM), and costs nothing. Any other cost above the countdown expires it; the countdown
    // then wraps, and the caller draws it afresh.
    std::uint64_t cost = size + 1;
    bool sampled = state.bytes_until_sample <= cost;
    state.bytes_until_sample -= cost;
    return sampled;
  }

  // Starts the countdown to the next sample point afresh (after a sample, or to drop one).
  static void DrawNextPoint(SamplerState& state, std::uint64_t interval) {
    state.bytes_until_sample = static_cast<std::uint64_t>(NextDistance(state, interval));
  }

  // A uniform double in (0, 1], from the top 53 bits of the generator.
  static double NextUniform(SamplerState& state);
};

}  // namespace heaprec
