// The sampler's statistics: distances are exponential with the configured mean, and the weights
// make the estimates unbiased. Every bound below is derived in its comment; seeds are fixed.
#include "core/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace heaprec {
namespace {

TEST(SamplerTest, MeanDistanceEqualsInterval) {
  // ceil(Exp(T)) has mean T + 1/2 (to within 1/(12T)) and standard deviation ~T. Over n draws the
  // mean's standard error is T/sqrt(n); 6 standard errors leave a false-failure chance ~2e-9.
  constexpr std::uint64_t kInterval = 4096;
  constexpr int kDraws = 1000000;
  SamplerState state;
  Sampler::Seed(state, 42, kInterval);
  double sum = 0;
  for (int i = 0; i < kDraws; ++i)
    sum += static_cast<double>(Sampler::NextDistance(state, kInterval));
  double mean = sum / kDraws;
  EXPECT_NEAR(mean, kInterval + 0.5, 6.0 * kInterval / std::sqrt(kDraws));
}

TEST(SamplerTest, DistancesAreExponential) {
  // P(D <= k) = 1 - exp(-k/T) for whole k. Check at T/2, T and 3T with a binomial bound of 6 sigma.
  constexpr std::uint64_t kInterval = 1000;
  constexpr int kDraws = 200000;
  SamplerState state;
  Sampler::Seed(state, 7, kInterval);
  int at_most[3] = {0, 0, 0};
  const double thresholds[3] = {500, 1000, 3000};
  for (int i = 0; i < kDraws; ++i) {
    double d = static_cast<double>(Sampler::NextDistance(state, kInterval));
    for (int t = 0; t < 3; ++t) at_most[t] += d <= thresholds[t];
  }
  for (int t = 0; t < 3; ++t) {
    double p = 1 - std::exp(-thresholds[t] / kInterval);
    double sigma = std::sqrt(kDraws * p * (1 - p));
    EXPECT_NEAR(at_most[t], kDraws * p, 6 * sigma) << "threshold " << thresholds[t];
  }
}

TEST(SamplerTest, WeightIsInverseSamplingProbability) {
  EXPECT_DOUBLE_EQ(Sampler::Weight(99, 100), 1.0 / (1.0 - std::exp(-1.0)));
  EXPECT_NEAR(Sampler::Weight(0, 1 << 19), (1 << 19), 1.0);    // tiny objects stand for ~T/(n+1)
  EXPECT_NEAR(Sampler::Weight(1 << 30, 1 << 19), 1.0, 1e-12);  // huge objects are always sampled
}

TEST(SamplerTest, ExactModeSamplesEverythingWithWeightOne) {
  SamplerState state;
  Sampler::Seed(state, 1, 1);
  for (std::uint64_t size : {0, 1, 100, 1 << 20}) {
    EXPECT_TRUE(Sampler::Account(state, size));
    Sampler::DrawNextPoint(state, 1);
    EXPECT_EQ(state.bytes_until_sample, 0u);
    EXPECT_EQ(Sampler::Weight(size, 1), 1.0);
  }
}

TEST(SamplerTest, CountdownTakesSizePlusOne) {
  SamplerState state;
  Sampler::Seed(state, 5, 4096);
  state.bytes_until_sample = 100;
  EXPECT_FALSE(Sampler::Account(state, 0));
  EXPECT_EQ(state.bytes_until_sample, 99u);
  EXPECT_FALSE(Sampler::Account(state, 97));
  EXPECT_EQ(state.bytes_until_sample, 1u);
  EXPECT_TRUE(Sampler::Account(state, 0));  // the point falls on the last position
  EXPECT_EQ(state.bytes_until_sample, 0u);
}

// A request larger than the countdown expires it, however large (the countdown then wraps, and
// the caller draws it afresh); malloc(SIZE_MAX), whose size + 1 wraps to 0, allocates nothing
// (it fails) and costs nothing.
TEST(SamplerTest, HugeRequestsExpireTheCountdown) {
  SamplerState state;
  Sampler::Seed(state, 11, 1 << 20);
  for (std::uint64_t size : {std::uint64_t{SIZE_MAX} - 1, std::uint64_t{1} << 63,
                             static_cast<std::uint64_t>(Sampler::kMaxDistance)}) {
    state.bytes_until_sample = static_cast<std::uint64_t>(Sampler::kMaxDistance);
    EXPECT_TRUE(Sampler::Account(state, size)) << size;
  }
  state.bytes_until_sample = 100;
  EXPECT_FALSE(Sampler::Account(state, SIZE_MAX));
  EXPECT_EQ(state.bytes_until_sample, 100u);
}

TEST(SamplerTest, DistancesStayWithinTheCountdownsRange) {
  SamplerState state;
  Sampler::Seed(state, 13, UINT64_MAX);
  for (int i = 0; i < 1000; ++i) {
    std::int64_t d = Sampler::NextDistance(state, UINT64_MAX);
    EXPECT_GE(d, 1);
    EXPECT_LE(d, Sampler::kMaxDistance);
  }
}

TEST(SamplerTest, ZeroByteAllocationsCanBeSampled) {
  // With the +1 per allocation, N zero-byte allocations cover N positions: about N/T samples.
  constexpr std::uint64_t kInterval = 100;
  SamplerState state;
  Sampler::Seed(state, 3, kInterval);
  int sampled = 0;
  for (int i = 0; i < 100000; ++i) {
    if (Sampler::Account(state, 0)) {
      ++sampled;
      Sampler::DrawNextPoint(state, kInterval);
    }
  }
  // Expected 1000 (Poisson, sigma ~31.6): 6 sigma.
  EXPECT_NEAR(sampled, 1000, 190);
}

// Drives the countdown (the preload fast path's own, Sampler::Account) over a stream mixing three
// object sizes, then checks that the weighted estimate of each size's count and bytes is within 6
// standard deviations of the truth. For N objects of size n sampled with probability p, the
// estimate X = sum of n/p over sampled objects is unbiased with Var(X) = N n^2 (1-p)/p.
TEST(SamplerTest, EstimatesAreUnbiasedPerSize) {
  constexpr std::uint64_t kInterval = 64 * 1024;
  const std::uint64_t sizes[3] = {16, 4000, 300000};
  const int counts[3] = {2000000, 100000, 2000};
  SamplerState state;
  Sampler::Seed(state, 12345, kInterval);
  double estimate[3] = {0, 0, 0};
  // Interleave the sizes the way a program would, so each sample point lands in a mix.
  int remaining[3] = {counts[0], counts[1], counts[2]};
  for (int round = 0; remaining[0] + remaining[1] + remaining[2] > 0; ++round) {
    for (int s = 0; s < 3; ++s) {
      int batch = s == 0 ? 1000 : (s == 1 ? 50 : 1);
      for (int i = 0; i < batch && remaining[s] > 0; ++i, --remaining[s]) {
        if (Sampler::Account(state, sizes[s])) {
          estimate[s] += Sampler::Weight(sizes[s], kInterval) * static_cast<double>(sizes[s]);
          Sampler::DrawNextPoint(state, kInterval);
        }
      }
    }
  }
  for (int s = 0; s < 3; ++s) {
    double n = static_cast<double>(sizes[s]);
    double p = 1 - std::exp(-(n + 1) / kInterval);
    double truth = counts[s] * n;
    double sigma = std::sqrt(counts[s] * n * n * (1 - p) / p);
    EXPECT_NEAR(estimate[s], truth, 6 * sigma) << "size " << sizes[s];
  }
}

TEST(SamplerTest, UnbiasedOverManySeeds) {
  // The mean over 200 independent runs of a small workload (500 objects of 1000 bytes, T = 8 KiB)
  // must be within 6 standard errors of the truth: bias would show here even where one run is
  // noisy.
  constexpr std::uint64_t kInterval = 8192;
  constexpr int kRuns = 200, kObjects = 500;
  constexpr double kSize = 1000;
  double p = 1 - std::exp(-(kSize + 1) / kInterval);
  double truth = kObjects * kSize;
  double run_sigma = std::sqrt(kObjects * kSize * kSize * (1 - p) / p);
  double sum = 0;
  for (int run = 0; run < kRuns; ++run) {
    SamplerState state;
    Sampler::Seed(state, 1000 + run, kInterval);
    double estimate = 0;
    for (int i = 0; i < kObjects; ++i) {
      if (Sampler::Account(state, 1000)) {
        estimate += Sampler::Weight(1000, kInterval) * kSize;
        Sampler::DrawNextPoint(state, kInterval);
      }
    }
    sum += estimate;
  }
  EXPECT_NEAR(sum / kRuns, truth, 6 * run_sigma / std::sqrt(kRuns));
}

}  // namespace
}  // namespace heaprec
