// schema/exp_log.h against glibc's libm, over the ranges the sampler uses: the uniform draws
// (2^-53 to 1) for the logarithm, and -size/interval (from -2^-40 to below -40) for exp(x) - 1.
#include "schema/exp_log.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>

#include "schema/sampling_weight.h"

namespace heaprec::schema {
namespace {

// Distance in units in the last place between two finite doubles of the same sign.
std::uint64_t UlpsApart(double a, double b) {
  auto ordered = [](double x) {
    auto bits = std::bit_cast<std::int64_t>(x);
    return bits < 0 ? INT64_MIN - bits : bits;
  };
  std::int64_t d = ordered(a) - ordered(b);
  return static_cast<std::uint64_t>(d < 0 ? -d : d);
}

TEST(ExpLogTest, NaturalLogMatchesLibmOnTheSamplersDraws) {
  std::mt19937_64 random(7);
  std::uint64_t worst = 0;
  for (int i = 0; i < 1'000'000; ++i) {
    // The sampler's draws: (k + 1) / 2^53 for a random 53-bit k, and the same spread over scales.
    double u = static_cast<double>((random() >> 11) + 1) * (1.0 / 9007199254740992.0);
    if (i % 2 == 1) u = std::ldexp(0.5 + u / 2, -static_cast<int>(random() % 53));
    double want = std::log(u);
    double got = NaturalLog(u);
    // Near u = 1 the logarithm tends to 0: there, compare absolutely.
    if (std::fabs(want) < 1e-3) {
      ASSERT_NEAR(got, want, 4e-19) << u;
      continue;
    }
    worst = std::max(worst, UlpsApart(got, want));
  }
  // Measured: 3 (the quotient s and the sum round once each). 4 units in the last place are
  // 2^-50 of the value, where the draw itself has 53 bits.
  EXPECT_LE(worst, 4u);
}

TEST(ExpLogTest, NaturalLogAtExactPoints) {
  EXPECT_EQ(NaturalLog(1.0), 0.0);
  EXPECT_DOUBLE_EQ(NaturalLog(0.5), -0.6931471805599453);
  EXPECT_DOUBLE_EQ(NaturalLog(0x1p-53), -53 * 0.6931471805599453);
  EXPECT_DOUBLE_EQ(NaturalLog(std::sqrt(2.0)), 0.34657359027997264);
}

TEST(ExpLogTest, ExpMinusOneMatchesLibmFromTinyToSaturated) {
  std::mt19937_64 random(11);
  std::uint64_t worst = 0;
  for (int i = 0; i < 1'000'000; ++i) {
    // -(size + 1) / interval: from 2^-40 (a byte under a 1 TiB interval) to 2^6 (past saturation).
    double x = -std::ldexp(1.0 + static_cast<double>(random() >> 11) * 0x1p-53,
                           -40 + static_cast<int>(random() % 47));
    worst = std::max(worst, UlpsApart(ExpMinusOne(x), std::expm1(x)));
  }
  EXPECT_LE(worst, 2u);
  EXPECT_EQ(ExpMinusOne(0.0), 0.0);
  EXPECT_EQ(ExpMinusOne(-50.0), -1.0);
  EXPECT_EQ(ExpMinusOne(-0x1p-60), -0x1p-60);
}

// The weight of a sampled object: what every estimate is multiplied by.
TEST(ExpLogTest, SampleWeightsMatchLibmsFormula) {
  for (std::uint64_t interval : {2ull, 4096ull, 524288ull, 1ull << 30}) {
    for (std::uint64_t size : {0ull, 1ull, 16ull, 1000ull, 524287ull, 1ull << 24, 1ull << 40}) {
      double x = (static_cast<double>(size) + 1.0) / static_cast<double>(interval);
      double want = -1.0 / std::expm1(-x);
      EXPECT_LE(UlpsApart(PerByteSampleWeight(size, interval), want), 2u)
          << size << " " << interval;
    }
  }
}

}  // namespace
}  // namespace heaprec::schema
