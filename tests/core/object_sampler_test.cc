// The per-object sampler: every object is sampled independently with probability p = 1/N (a
// Bernoulli process), so sampled counts are Binomial, the gaps between sampled objects are
// Geometric(p) with mean N, and objects from sites that alternate in a fixed rhythm are sampled
// alike. Every bound below is derived in its comment: 6 standard deviations, a two-sided false
// failure chance of ~2e-9 for a fresh seed. Seeds are fixed, so each run is repeatable anyway.
#include "core/object_sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace heaprec {
namespace {

// Drives `sampler` over `objects` objects and returns the gap before each sampled object: the
// number of objects up to and including it since the previous sampled one (or the start).
std::vector<std::int64_t> ObservedGaps(ObjectSampler& sampler, std::int64_t objects) {
  std::vector<std::int64_t> gaps;
  std::int64_t since_last = 0;
  for (std::int64_t i = 0; i < objects; ++i) {
    ++since_last;
    if (sampler.ShouldSample()) {
      gaps.push_back(since_last);
      since_last = 0;
    }
  }
  return gaps;
}

TEST(ObjectSamplerTest, EveryOneSamplesEveryObject) {
  ObjectSampler sampler;
  sampler.Configure(1, 42);
  for (int i = 0; i < 10000; ++i) ASSERT_TRUE(sampler.ShouldSample()) << "object " << i;
  for (int i = 0; i < 100; ++i) EXPECT_EQ(sampler.NextGap(), 1);
  EXPECT_EQ(sampler.every(), 1u);
  EXPECT_EQ(sampler.weight(), 1.0);
}

TEST(ObjectSamplerTest, ZeroIsTreatedAsOne) {
  ObjectSampler sampler;
  sampler.Configure(0, 42);
  EXPECT_EQ(sampler.every(), 1u);
  EXPECT_EQ(sampler.weight(), 1.0);
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(sampler.ShouldSample()) << "object " << i;
}

TEST(ObjectSamplerTest, WeightIsExactlyN) {
  // The Horvitz-Thompson weight of a Bernoulli(1/N) sample is 1/p = N exactly, whatever the size.
  const std::uint64_t everies[] = {2, 10, 1000, std::uint64_t{1} << 40};
  for (std::uint64_t n : everies) {
    ObjectSampler sampler;
    sampler.Configure(n, 7);
    EXPECT_EQ(sampler.every(), n);
    EXPECT_EQ(sampler.weight(), static_cast<double>(n)) << "N = " << n;
  }
}

TEST(ObjectSamplerTest, SampledCountIsBinomial) {
  // Each of M objects is sampled independently with p = 1/N, so the count is Binomial(M, p): mean
  // M/N, standard deviation sqrt(M p (1 - p)). With M = 10^6:
  //   N = 2:    mean 500000, sigma 500   -> +-3000
  //   N = 10:   mean 100000, sigma 300   -> +-1800
  //   N = 1000: mean 1000,   sigma 31.6  -> +-190
  // Summing weight() over the sampled objects estimates M; that estimate is N times the count, so
  // the same bound (scaled by N) covers it.
  constexpr std::int64_t kObjects = 1000000;
  const std::uint64_t everies[] = {2, 10, 1000};
  for (std::uint64_t n : everies) {
    ObjectSampler sampler;
    sampler.Configure(n, 1234 + n);
    std::int64_t sampled = 0;
    for (std::int64_t i = 0; i < kObjects; ++i) sampled += sampler.ShouldSample();
    double p = 1.0 / static_cast<double>(n);
    double sigma = std::sqrt(kObjects * p * (1 - p));
    EXPECT_NEAR(static_cast<double>(sampled), kObjects * p, 6 * sigma) << "N = " << n;
    EXPECT_NEAR(static_cast<double>(sampled) * sampler.weight(), kObjects,
                6 * sigma * static_cast<double>(n))
        << "N = " << n;
  }
}

TEST(ObjectSamplerTest, MeanGapIsN) {
  // Gaps of a Bernoulli(p) process are Geometric(p) on 1, 2, ...: mean 1/p = N, variance
  // (1 - p) / p^2. Over k gaps the mean's standard error is sqrt((1 - p) / k) / p:
  //   N = 2,    k = 200000: SE 0.0032 -> +-0.019
  //   N = 10,   k = 200000: SE 0.021  -> +-0.13
  //   N = 1000, k ~ 20000:  SE 7.1    -> +-42
  // The first two are tight enough to catch an off-by-one in the gap (floor instead of ceil gives
  // mean N - 1).
  struct Case {
    std::uint64_t every;
    std::int64_t objects;  // enough objects for ~200000 gaps, ~20000 for N = 1000
  };
  const Case cases[] = {{2, 400000}, {10, 2000000}, {1000, 20000000}};
  for (const Case& c : cases) {
    ObjectSampler sampler;
    sampler.Configure(c.every, 99);
    std::vector<std::int64_t> gaps = ObservedGaps(sampler, c.objects);
    ASSERT_GT(gaps.size(), 1000u) << "N = " << c.every;
    double sum = 0;
    for (std::int64_t g : gaps) {
      ASSERT_GE(g, 1);
      sum += static_cast<double>(g);
    }
    double k = static_cast<double>(gaps.size());
    double p = 1.0 / static_cast<double>(c.every);
    double standard_error = std::sqrt((1 - p) / k) / p;
    EXPECT_NEAR(sum / k, static_cast<double>(c.every), 6 * standard_error) << "N = " << c.every;
  }
}

TEST(ObjectSamplerTest, GapsAreGeometric) {
  // A mean of N could also come from, say, gaps uniform on 1..2N-1; the shape must be geometric:
  // P(gap <= j) = 1 - (1 - p)^j. For N = 10 at j = 1, 10, 30 that is 0.1, 0.651, 0.958. Each
  // fraction of k gaps is a binomial proportion with sigma sqrt(q (1 - q) / k).
  constexpr std::uint64_t kEvery = 10;
  ObjectSampler sampler;
  sampler.Configure(kEvery, 2024);
  std::vector<std::int64_t> gaps = ObservedGaps(sampler, 2000000);
  double k = static_cast<double>(gaps.size());
  ASSERT_GT(k, 100000);
  const std::int64_t thresholds[] = {1, 10, 30};
  for (std::int64_t j : thresholds) {
    double at_most = 0;
    for (std::int64_t g : gaps) at_most += g <= j;
    double q = 1 - std::pow(1 - 1.0 / kEvery, static_cast<double>(j));
    EXPECT_NEAR(at_most / k, q, 6 * std::sqrt(q * (1 - q) / k)) << "j = " << j;
  }
}

TEST(ObjectSamplerTest, PeriodicSitesAreNotAliased) {
  // A loop that allocates one object at site A and one at site B per iteration, with N = 2: an
  // "every Nth object" sampler would sample all of A and none of B. Independent sampling gives
  // each site Binomial(M/2, 1/2): with M/2 = 100000, mean 50000 and sigma 158 -> +-949, and the
  // difference of the two independent counts has sigma sqrt(2) * 158 = 224 -> +-1342.
  constexpr std::int64_t kIterations = 100000;
  ObjectSampler sampler;
  sampler.Configure(2, 31337);
  std::int64_t a = 0, b = 0, both = 0;
  for (std::int64_t i = 0; i < kIterations; ++i) {
    bool sampled_a = sampler.ShouldSample();
    bool sampled_b = sampler.ShouldSample();
    a += sampled_a;
    b += sampled_b;
    both += sampled_a && sampled_b;
  }
  double sigma = std::sqrt(kIterations * 0.5 * 0.5);
  EXPECT_NEAR(static_cast<double>(a), kIterations / 2.0, 6 * sigma);
  EXPECT_NEAR(static_cast<double>(b), kIterations / 2.0, 6 * sigma);
  EXPECT_NEAR(static_cast<double>(a - b), 0, 6 * std::sqrt(2.0) * sigma);
  // A sampler that took exactly one of each pair at random would pass the above. Independence
  // means both are sampled in a quarter of the iterations: Binomial(M/2, 1/4), sigma 137 -> +-822.
  EXPECT_NEAR(static_cast<double>(both), kIterations / 4.0,
              6 * std::sqrt(kIterations * 0.25 * 0.75));
}

TEST(ObjectSamplerTest, RotationOfNSitesIsNotAliased) {
  // The worst rhythm for a periodic sampler: N sites in rotation with N = 10. Each site gets
  // Binomial(20000, 1/10): mean 2000, sigma 42.4 -> +-255.
  constexpr std::uint64_t kEvery = 10;
  constexpr std::int64_t kRounds = 20000;
  ObjectSampler sampler;
  sampler.Configure(kEvery, 5);
  std::int64_t per_site[kEvery] = {};
  for (std::int64_t r = 0; r < kRounds; ++r) {
    for (std::uint64_t site = 0; site < kEvery; ++site) per_site[site] += sampler.ShouldSample();
  }
  double p = 1.0 / kEvery;
  for (std::uint64_t site = 0; site < kEvery; ++site) {
    EXPECT_NEAR(static_cast<double>(per_site[site]), kRounds * p,
                6 * std::sqrt(kRounds * p * (1 - p)))
        << "site " << site;
  }
}

std::vector<bool> Decisions(std::uint64_t every, std::uint64_t seed, int objects) {
  ObjectSampler sampler;
  sampler.Configure(every, seed);
  std::vector<bool> out;
  for (int i = 0; i < objects; ++i) out.push_back(sampler.ShouldSample());
  return out;
}

TEST(ObjectSamplerTest, SameSeedRepeatsDifferentSeedsDiffer) {
  constexpr int kObjects = 100000;
  std::vector<bool> first = Decisions(10, 17, kObjects);
  EXPECT_EQ(Decisions(10, 17, kObjects), first);

  // Configure resets the state completely: a sampler reused with the same seed repeats too.
  ObjectSampler reused;
  reused.Configure(10, 99);
  for (int i = 0; i < 12345; ++i) reused.ShouldSample();
  reused.Configure(10, 17);
  std::vector<bool> again;
  for (int i = 0; i < kObjects; ++i) again.push_back(reused.ShouldSample());
  EXPECT_EQ(again, first);

  // Two independent Bernoulli(1/10) sequences disagree at a position with probability
  // 2 p (1 - p) = 0.18: 18000 of 100000 positions, sigma 121 -> +-729. Seed 0 must work as well.
  for (std::uint64_t seed : {std::uint64_t{18}, std::uint64_t{0}}) {
    std::vector<bool> other = Decisions(10, seed, kObjects);
    int differing = 0;
    for (int i = 0; i < kObjects; ++i) differing += first[i] != other[i];
    EXPECT_NEAR(differing, kObjects * 0.18, 6 * std::sqrt(kObjects * 0.18 * 0.82))
        << "seed " << seed;
  }
}

TEST(ObjectSamplerTest, HugeNStaysInRange) {
  // With N near 2^64 the inverted gap would overflow int64; it is clamped and stays >= 1, and
  // essentially nothing is sampled.
  ObjectSampler sampler;
  sampler.Configure(std::numeric_limits<std::uint64_t>::max(), 3);
  for (int i = 0; i < 1000; ++i) {
    std::int64_t gap = sampler.NextGap();
    ASSERT_GE(gap, 1);
    ASSERT_LE(gap, static_cast<std::int64_t>(4.0e18));
  }
  int sampled = 0;
  for (int i = 0; i < 100000; ++i) sampled += sampler.ShouldSample();
  EXPECT_EQ(sampled, 0);
}

}  // namespace
}  // namespace heaprec
