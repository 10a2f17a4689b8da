// How far a sampled number can be trusted: the variance of heaprec's estimates, and 95% intervals.
//
// The model (src/core/sampler.h): an object of s bytes is sampled with probability
// p = 1 - exp(-(s+1)/T), T the sampling interval (the profile's period), and then counts w = 1/p times.
// A pprof sample groups the sampled objects of one (stack, size); its estimated object count is
// N = n·w for n sampled objects. Objects are sampled independently, so the Horvitz-Thompson variance
// estimator applies per object and adds up:
//
//     Var(N) ≈ n · (1-p)/p² = N · (w - 1)          Var(bytes) ≈ N · (w - 1) · s²
//
// Sums over samples (a function's flat or cum value, a site, a whole profile) add their variances.
// The 95% interval is value ± 1.96·sqrt(Var), clamped at zero (normal approximation: good from a few
// tens of sampled objects up; below that it is indicative). In exact mode (period 1) w = 1 and every
// interval has zero width.
#pragma once

#include <cstdint>

#include "profile/profile.h"

namespace heaprec {

// The weight of one sampled object of `size` bytes at sampling interval `period` (1 in exact mode).
double SampleWeight(int64_t size, int64_t period);

// The variance of a pprof sample's value of type `sample_type` (e.g. "inuse_space"), from the value
// itself, the object size (`bytes` label) and the period. 0 for values heaprec does not sample.
// A negative value (negated, as in a diff profile's base samples) has its magnitude's variance.
double ValueVariance(const std::string& sample_type, int64_t value, int64_t size, int64_t period);

// The object size of a sample (its numeric `bytes` label), or -1 if it has none.
int64_t SampleObjectSize(const Sample& sample);

struct Interval {
  double low;
  double high;
};

// value ± 1.96·sqrt(variance), the low end clamped at 0.
Interval Confidence95(double value, double variance);

// Whether a profile was sampled (period > 1) rather than exact.
bool IsSampled(const Profile& profile);

}  // namespace heaprec
