#include "profile/sampling_error.h"

#include <cmath>

#include "schema/profile_schema.h"
#include "schema/sampling_weight.h"

namespace heaprec::profile {

SamplingModel::SamplingModel(const Profile& profile)
    : period(profile.period),
      per_object(profile.period_type.type == schema::kPerObjectPeriodType) {}

double SampleWeight(int64_t size, const SamplingModel& model) {
  if (model.period <= 1) return 1.0;
  // Every object had the same chance 1/N, so every sampled one stands for N.
  if (model.per_object) return static_cast<double>(model.period);
  if (size < 0) return 1.0;
  return schema::PerByteSampleWeight(static_cast<uint64_t>(size),
                                     static_cast<uint64_t>(model.period));
}

double SampleWeight(int64_t size, int64_t period) {
  return SampleWeight(size, SamplingModel(period, /*objects=*/false));
}

double ValueVariance(const std::string& sample_type, int64_t value, int64_t size,
                     const SamplingModel& model) {
  // Var(-X) = Var(X): a negated value (a diff profile's base samples) has the same variance.
  if (model.period <= 1 || value == 0) return 0.0;
  bool objects = IsObjectCountType(sample_type);
  if (!objects && !IsByteCountType(sample_type)) return 0.0;
  // Per object, w does not depend on the size, so a count's variance needs none.
  if (size < 0 && !(objects && model.per_object)) return 0.0;
  double magnitude = std::fabs(static_cast<double>(value));
  double w = SampleWeight(size, model);
  // value = N (objects) or N·s (bytes): recover N, then N·(w-1), times s² for bytes.
  double s = static_cast<double>(size);
  double n_objects = objects ? magnitude : (s > 0 ? magnitude / s : 0.0);
  double var_objects = n_objects * (w - 1.0);
  return objects ? var_objects : var_objects * s * s;
}

double ValueVariance(const std::string& sample_type, int64_t value, int64_t size, int64_t period) {
  return ValueVariance(sample_type, value, size, SamplingModel(period, /*objects=*/false));
}

bool IsObjectCountType(const std::string& sample_type) {
  return sample_type == schema::kInuseObjects || sample_type == schema::kAllocObjects;
}

bool IsByteCountType(const std::string& sample_type) {
  return sample_type == schema::kInuseSpace || sample_type == schema::kAllocSpace;
}

int64_t SampleObjectSize(const Sample& sample) {
  for (const Label& label : sample.labels) {
    if (label.key == schema::kBytesLabel && label.str.empty()) return label.num;
  }
  return -1;
}

Interval Confidence95(double value, double variance) {
  double half = 1.959963984540054 * std::sqrt(variance > 0 ? variance : 0.0);
  double low = value - half;
  return {low < 0 ? 0.0 : low, value + half};
}

bool IsSampled(const Profile& profile) { return profile.period > 1; }

}  // namespace heaprec::profile
