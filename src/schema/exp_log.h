// The natural logarithm and exp(x) - 1, for the sampler's draws and weights, without libm.
//
// They are the only two functions the preload library took from libm, and every profiled process
// that did not load libm itself (a shell, make, the compiler driver, as: most short-lived C
// programs) loaded it for them (docs/benchmarks.md, Part 14, "the libraries every process
// loaded"). Both reduce the argument exactly and sum a series in the reduced range; measured
// against glibc's over the ranges heaprec uses, they agree within 3 units in the last place
// (tests/core/exp_log_test.cc). Header-only and allocation-free.
#pragma once

#include <bit>
#include <cstdint>

namespace heaprec::schema {

namespace exp_log_detail {

// ln 2 split (fdlibm's): kLn2High has 21 trailing zero bits, so k * kLn2High is exact here.
inline constexpr double kLn2High = 6.93147180369123816490e-01;
inline constexpr double kLn2Low = 1.90821492927058770002e-10;

inline std::uint64_t Bits(double x) { return std::bit_cast<std::uint64_t>(x); }
inline double FromBits(std::uint64_t bits) { return std::bit_cast<double>(bits); }

// 2^k for the normal range of k.
inline double PowerOfTwo(int k) { return FromBits(static_cast<std::uint64_t>(k + 1023) << 52); }

// exp(r) - 1 for |r| <= ln(2) / 2 by its Taylor series, Horner's rule: the 17th term is below
// 2^-60 of the sum, and no term cancels another (all have r's sign or alternate and shrink).
// A smaller |r| needs fewer terms for the same bound, and the weight of a small object under the
// default interval is the common case (|r| below 2^-10 for objects under 512 bytes at 512 KiB):
// 6 terms there instead of 17, a chain of 5 multiply-adds instead of 16 on every sample.
inline double ExpMinusOneReduced(double r) {
  constexpr double kInverseFactorials[] = {1.0 / 355687428096000.0,  // 1/17!
                                           1.0 / 20922789888000.0,
                                           1.0 / 1307674368000.0,
                                           1.0 / 87178291200.0,
                                           1.0 / 6227020800.0,
                                           1.0 / 479001600.0,
                                           1.0 / 39916800.0,
                                           1.0 / 3628800.0,  // 1/10!
                                           1.0 / 362880.0,
                                           1.0 / 40320.0,
                                           1.0 / 5040.0,
                                           1.0 / 720.0,  // 1/6!
                                           1.0 / 120.0,
                                           1.0 / 24.0,
                                           1.0 / 6.0,
                                           1.0 / 2.0,
                                           1.0};
  constexpr int kTerms = sizeof(kInverseFactorials) / sizeof(kInverseFactorials[0]);
  // The first term left out is below |r|^n / (n+1)!: with n = 6 terms and |r| < 2^-10 that is
  // 2^-60 / 7!, with 10 terms and |r| < 2^-4 it is 2^-40 / 11!, about 2^-65.
  const double magnitude = r < 0 ? -r : r;
  const int terms = magnitude < 0x1p-10 ? 6 : magnitude < 0x1p-4 ? 10 : kTerms;
  double sum = kInverseFactorials[kTerms - terms];
  for (int i = kTerms - terms + 1; i < kTerms; ++i) sum = sum * r + kInverseFactorials[i];
  return sum * r;
}

}  // namespace exp_log_detail

// ln(x) for a positive, finite, normal x (the sampler's uniform draws are in [2^-53, 1]):
// x = m * 2^e with m in [sqrt(1/2), sqrt(2)), ln(m) = 2 atanh(s) with s = (m - 1) / (m + 1),
// |s| <= 0.1716, whose odd series is below 2^-60 of the sum after the s^23 term.
inline double NaturalLog(double x) {
  using namespace exp_log_detail;
  std::uint64_t bits = Bits(x);
  int exponent = static_cast<int>((bits >> 52) & 0x7ff) - 1023;
  double m = FromBits((bits & 0x000f'ffff'ffff'ffffULL) | 0x3ff0'0000'0000'0000ULL);  // [1, 2)
  if (m > 1.4142135623730951) {
    m *= 0.5;
    ++exponent;
  }
  double s = (m - 1.0) / (m + 1.0);
  double s2 = s * s;
  double series = 1.0 / 23.0;
  for (int k = 21; k >= 1; k -= 2) series = series * s2 + 1.0 / k;
  double log_m = 2.0 * s * series;
  double e = exponent;
  return e * kLn2High + (log_m + e * kLn2Low);
}

// exp(x) - 1 for x <= 0, precise for small |x| (the weight 1 / (1 - exp(-size/T)) of a small object
// under a large interval T): x = k ln2 + r with |r| <= ln(2) / 2, exp(x) - 1 = 2^k (exp(r) - 1) +
// (2^k - 1). Below -40 the answer is -1 in double precision.
inline double ExpMinusOne(double x) {
  using namespace exp_log_detail;
  if (x < -40.0) return -1.0;
  if (x >= -0.34657359027997264) return ExpMinusOneReduced(x);
  int k = static_cast<int>(x * 1.4426950408889634 - 0.5);  // round(x / ln2), x < 0
  double r = (x - k * kLn2High) - k * kLn2Low;
  double scale = PowerOfTwo(k);
  return scale * ExpMinusOneReduced(r) + (scale - 1.0);
}

}  // namespace heaprec::schema
