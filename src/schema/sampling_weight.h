// The weight of one sampled object under per-byte sampling: what the recorder multiplies a sample
// by (src/core) and what the error bars assume (profile/sampling_error.h). One formula, one place.
#pragma once

#include <cstdint>

#include "schema/exp_log.h"

namespace heaprec::schema {

// An object of `size` bytes is sampled with probability p = 1 - exp(-(size+1)/T) at mean interval
// T = `interval` bytes (core/sampler.h says why size + 1), and counts 1/p times: Go's estimator.
// exp(x) - 1 keeps the precision for small objects under large intervals (ExpMinusOne, not libm's:
// schema/exp_log.h says why). 1 in exact mode (T <= 1).
inline double PerByteSampleWeight(std::uint64_t size, std::uint64_t interval) {
  if (interval <= 1) return 1.0;
  double x = (static_cast<double>(size) + 1.0) / static_cast<double>(interval);
  return -1.0 / ExpMinusOne(-x);
}

}  // namespace heaprec::schema
