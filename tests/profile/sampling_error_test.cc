// The sampling models of profile/sampling_error.h: which model a profile has, the weights, the
// variances (against hand-computed values and against a simulation of the sampler), exact mode,
// the per-byte functions that the older callers use, and the 95% interval of a value.
#include "profile/sampling_error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "interval_profile.h"
#include "test_profiles.h"

namespace heaprec {
namespace {

using namespace ::heaprec::profile;
using test_support::interval::kInterval;

TEST(SamplingModelTest, TheProfilesPeriodTypeSaysWhichModel) {
  SamplingModel ruby(test_support::MakeRubyProfile(250));
  EXPECT_TRUE(ruby.per_object);
  EXPECT_EQ(ruby.period, 250);
  EXPECT_TRUE(ruby.sampled());

  SamplingModel native(test_support::MakeReportProfile());
  EXPECT_FALSE(native.per_object);
  EXPECT_EQ(native.period, 524288);

  // Only "objects" means per object: a count-typed period of another kind keeps the byte model.
  Profile other = test_support::MakeReportProfile();
  other.period_type = {"cpu", "nanoseconds"};
  EXPECT_FALSE(SamplingModel(other).per_object);
  EXPECT_FALSE(SamplingModel(test_support::MakeRubyProfile(1)).sampled());
}

TEST(SamplingModelTest, PerObjectWeightIsThePeriodWhateverTheSize) {
  SamplingModel model(1000, /*objects=*/true);
  for (int64_t size : std::vector<int64_t>{0, 1, 40, 4096, int64_t{1} << 30, -1}) {
    EXPECT_EQ(SampleWeight(size, model), 1000.0) << size;
  }
  // Per byte the weight depends on the size: near 1 for objects much larger than the interval.
  SamplingModel bytes(1000, /*objects=*/false);
  EXPECT_NEAR(SampleWeight(40, bytes), 1.0 / (1.0 - std::exp(-41.0 / 1000)), 1e-9);
  EXPECT_NEAR(SampleWeight(1 << 20, bytes), 1.0, 1e-12);
}

TEST(SamplingModelTest, PerObjectVariancesAreHorvitzThompson) {
  // 300 estimated objects of 40 B at N = 100: Var(count) = 300·99, Var(bytes) = 300·99·40².
  SamplingModel model(100, /*objects=*/true);
  EXPECT_DOUBLE_EQ(ValueVariance("inuse_objects", 300, 40, model), 300.0 * 99);
  EXPECT_DOUBLE_EQ(ValueVariance("alloc_objects", 300, 40, model), 300.0 * 99);
  EXPECT_DOUBLE_EQ(ValueVariance("inuse_space", 300 * 40, 40, model), 300.0 * 99 * 40 * 40);
  EXPECT_DOUBLE_EQ(ValueVariance("alloc_space", 300 * 40, 40, model), 300.0 * 99 * 40 * 40);
  // The same from first principles: n = 3 sampled objects, each in with p = 1/N, so the
  // estimator's variance estimate is n·(1-p)/p² objects².
  double p = 1.0 / 100;
  EXPECT_NEAR(ValueVariance("inuse_objects", 300, 40, model), 3 * (1 - p) / (p * p), 1e-6);
  // A count does not need the object size; bytes do (unknown: 0, as for the byte model).
  EXPECT_DOUBLE_EQ(ValueVariance("inuse_objects", 300, -1, model), 300.0 * 99);
  EXPECT_EQ(ValueVariance("inuse_space", 12000, -1, model), 0);
  // Negated values (a diff's base) have their magnitude's variance; other types none.
  EXPECT_DOUBLE_EQ(ValueVariance("inuse_space", -12000, 40, model), 300.0 * 99 * 40 * 40);
  EXPECT_EQ(ValueVariance("cpu", 300, 40, model), 0);
  EXPECT_EQ(ValueVariance("inuse_space", 0, 40, model), 0);
}

TEST(SamplingModelTest, PeriodOneIsExactUnderBothModels) {
  for (bool objects : {false, true}) {
    SamplingModel exact(1, objects);
    EXPECT_FALSE(exact.sampled());
    EXPECT_EQ(SampleWeight(40, exact), 1.0);
    EXPECT_EQ(ValueVariance("inuse_objects", 300, 40, exact), 0);
    EXPECT_EQ(ValueVariance("inuse_space", 12000, 40, exact), 0);
  }
  EXPECT_EQ(
      ValueVariance("inuse_space", 12000, 40, SamplingModel(test_support::MakeRubyProfile(1))), 0);
}

TEST(SamplingModelTest, PeriodOverloadsKeepTheByteModel) {
  SamplingModel bytes(65536, /*objects=*/false);
  for (int64_t size : std::vector<int64_t>{1, 1000, 100000}) {
    EXPECT_EQ(SampleWeight(size, 65536), SampleWeight(size, bytes));
    EXPECT_EQ(ValueVariance("inuse_space", 650 * size, size, 65536),
              ValueVariance("inuse_space", 650 * size, size, bytes));
  }
  // The two models disagree wherever the object is not tiny relative to T: a per-byte 1000 B
  // object at T = 65536 weighs 66, a per-object one 65536.
  EXPECT_NEAR(SampleWeight(1000, 65536), 66.0, 0.5);
  EXPECT_EQ(SampleWeight(1000, SamplingModel(65536, true)), 65536.0);
}

// Simulates the Ruby front end's sampler (each object independently with probability 1/N, counted
// N times) on a known population, and checks that the estimates are unbiased and that the
// variance the model reports matches the spread of the estimates. Under the byte model the large
// objects would get a weight near 1 and a variance near 0, far from the simulated spread.
TEST(SamplingModelTest, PerObjectVarianceMatchesASimulatedSampler) {
  constexpr int64_t kEvery = 50;
  constexpr int kTrials = 4000;
  struct Group {
    int64_t objects;
    int64_t size;
  };
  const std::vector<Group> groups = {{5000, 8}, {3000, 40}, {400, 1000}, {60, 100000}};
  const SamplingModel model(kEvery, /*objects=*/true);
  std::mt19937_64 rng(12345);
  for (const Group& g : groups) {
    std::binomial_distribution<int64_t> sampled(g.objects, 1.0 / kEvery);
    double sum = 0, sum_squares = 0, reported = 0;
    for (int trial = 0; trial < kTrials; ++trial) {
      int64_t bytes = sampled(rng) * kEvery * g.size;  // the profile's inuse_space
      sum += static_cast<double>(bytes);
      sum_squares += static_cast<double>(bytes) * static_cast<double>(bytes);
      reported += ValueVariance("inuse_space", bytes, g.size, model);
    }
    double mean = sum / kTrials;
    double spread = (sum_squares - sum * mean) / (kTrials - 1);
    double truth = static_cast<double>(g.objects * g.size);
    double true_variance = static_cast<double>(g.objects) * (kEvery - 1) *
                           static_cast<double>(g.size) * static_cast<double>(g.size);
    SCOPED_TRACE(::testing::Message() << g.objects << " objects of " << g.size << " B");
    EXPECT_NEAR(mean, truth, 5 * std::sqrt(true_variance / kTrials));
    EXPECT_NEAR(spread, true_variance, 0.15 * true_variance);
    EXPECT_NEAR(reported / kTrials, true_variance, 0.15 * true_variance);
  }
}

TEST(ReportIntervalTest, ConfidenceIsValuePlusMinus196Sigma) {
  Interval ci = Confidence95(1000, 100);
  EXPECT_NEAR(ci.low, 1000 - 19.6, 0.01);
  EXPECT_NEAR(ci.high, 1000 + 19.6, 0.01);
  EXPECT_EQ(Confidence95(10, 10000).low, 0) << "clamped at zero";
  // A negated value (a diff profile's base samples) has the variance of its magnitude.
  EXPECT_DOUBLE_EQ(ValueVariance("inuse_space", -650000, 1000, kInterval),
                   ValueVariance("inuse_space", 650000, 1000, kInterval));
  EXPECT_GT(ValueVariance("inuse_space", -650000, 1000, kInterval), 0);
}

}  // namespace
}  // namespace heaprec
