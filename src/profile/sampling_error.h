// How far a sampled number can be trusted: the variance of heaprec's estimates, and 95% intervals.
//
// heaprec writes profiles under two sampling models; the profile's period_type tells which:
//
//   per byte (native; period_type space/bytes, period T = the sampling interval; core/sampler.h):
//     an object of s bytes is sampled with probability p = 1 - exp(-(s+1)/T) and counts w = 1/p
//     times, so big objects are almost always sampled and weigh about 1.
//   per object (Ruby; period_type objects/count, period N = sample_every; core/object_sampler.h):
//     each object is sampled with probability p = 1/N, whatever its size, and counts exactly
//     w = N times.
//
// Either way a pprof sample groups the sampled objects of one (stack, size); its estimated object
// count is N_est = n·w for n sampled objects. Objects are sampled independently, so the
// Horvitz-Thompson variance estimator applies per object and adds up, the same formulas for both
// models with their own w:
//
//     Var(count) ≈ n · (1-p)/p² = N_est · (w - 1)          Var(bytes) ≈ N_est · (w - 1) · s²
//
// Sums over samples (a function's flat or cum value, a site, a whole profile) add their variances.
// The 95% interval is value ± 1.96·sqrt(Var), clamped at zero (normal approximation: good from a
// few tens of sampled objects up; below that it is indicative). In exact mode (period 1) w = 1 and
// every interval has zero width.
#pragma once

#include <cstdint>
#include <string>

#include "profile/profile.h"

namespace heaprec::profile {

// How a profile's objects were sampled: the period and whether it counts bytes or objects.
struct SamplingModel {
  int64_t period = 1;       // T (bytes) or N (objects); <= 1 means exact
  bool per_object = false;  // false: per-byte Poisson sampling; true: each object with p = 1/N

  SamplingModel() = default;
  SamplingModel(int64_t sampling_period, bool objects)
      : period(sampling_period), per_object(objects) {}
  // The profile's model: per object when its period_type is "objects" (the Ruby front end's
  // profiles), per byte otherwise (the native profiles, and profiles of other tools).
  explicit SamplingModel(const Profile& profile);

  // Whether values are estimates (period > 1) rather than exact.
  bool sampled() const { return period > 1; }
};

// The weight of one sampled object of `size` bytes under `model`: 1/(1 - exp(-(size+1)/T)) per
// byte, exactly N per object (where `size` does not matter), 1 in exact mode.
double SampleWeight(int64_t size, const SamplingModel& model);

// The same under the per-byte model at sampling interval `period` (1 in exact mode).
double SampleWeight(int64_t size, int64_t period);

// The variance of a pprof sample's value of type `sample_type` (e.g. "inuse_space"), from the value
// itself, the object size (`bytes` label) and the sampling model. 0 for values heaprec does not
// sample, and when the size is unknown (-1) unless the variance does not depend on it (a count
// under the per-object model). A negative value (negated, as in a diff profile's base samples) has
// its magnitude's variance.
double ValueVariance(const std::string& sample_type, int64_t value, int64_t size,
                     const SamplingModel& model);

// The same under the per-byte model at sampling interval `period`.
double ValueVariance(const std::string& sample_type, int64_t value, int64_t size, int64_t period);

// Whether `sample_type` counts objects (inuse_objects, alloc_objects) or bytes (inuse_space,
// alloc_space): the values heaprec samples. Neither for any other type.
bool IsObjectCountType(const std::string& sample_type);
bool IsByteCountType(const std::string& sample_type);

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

}  // namespace heaprec::profile
