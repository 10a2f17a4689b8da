#include "core/sampler.h"

#include <cmath>

#include "schema/exp_log.h"

namespace heaprec {
namespace {

// splitmix64: turns any seed (even 0 or a small counter) into a well-mixed non-zero state.
std::uint64_t SplitMix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

void Sampler::Seed(SamplerState& state, std::uint64_t seed, std::uint64_t interval) {
  state.rng = SplitMix64(seed);
  if (state.rng == 0) state.rng = 0x2545f4914f6cdd1dULL;
  DrawNextPoint(state, interval);
}

double Sampler::NextUniform(SamplerState& state) {
  // xorshift64* (Vigna): fast, small state, good enough statistically for choosing sample points.
  std::uint64_t x = state.rng;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  state.rng = x;
  std::uint64_t bits = (x * 0x2545f4914f6cdd1dULL) >> 11;                 // 53 random bits
  return (static_cast<double>(bits) + 1.0) * (1.0 / 9007199254740992.0);  // (0, 1]
}

std::int64_t Sampler::NextDistance(SamplerState& state, std::uint64_t interval) {
  if (interval <= 1) return 0;
  // Inverse transform: -ln(U) * T is exponential with mean T for U uniform on (0, 1]. Rounding up
  // keeps P(distance <= k) = 1 - exp(-k / T) exactly for whole k, which is what the weight assumes.
  double distance =
      std::ceil(-schema::NaturalLog(NextUniform(state)) * static_cast<double>(interval));
  constexpr double kMax = static_cast<double>(kMaxDistance);  // exact: 5^18 * 2^20
  if (distance > kMax) distance = kMax;
  if (distance < 1.0) distance = 1.0;
  return static_cast<std::int64_t>(distance);
}

}  // namespace heaprec
