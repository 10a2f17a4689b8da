#include "profile/sampling_error.h"

#include <cmath>

namespace heaprec {

double SampleWeight(int64_t size, int64_t period) {
  if (period <= 1 || size < 0) return 1.0;
  // Same expression as the recorder's (expm1 keeps precision for small objects).
  double x = (static_cast<double>(size) + 1.0) / static_cast<double>(period);
  return -1.0 / std::expm1(-x);
}

double ValueVariance(const std::string& sample_type, int64_t value, int64_t size, int64_t period) {
  // Var(-X) = Var(X): a negated value (a diff profile's base samples) has the same variance.
  if (period <= 1 || size < 0 || value == 0) return 0.0;
  double magnitude = std::fabs(static_cast<double>(value));
  double w = SampleWeight(size, period);
  bool objects = sample_type == "inuse_objects" || sample_type == "alloc_objects";
  bool bytes = sample_type == "inuse_space" || sample_type == "alloc_space";
  if (!objects && !bytes) return 0.0;
  // value = N (objects) or N·s (bytes): recover N, then N·(w-1), times s² for bytes.
  double s = static_cast<double>(size);
  double n_objects = objects ? magnitude : (s > 0 ? magnitude / s : 0.0);
  double var_objects = n_objects * (w - 1.0);
  return objects ? var_objects : var_objects * s * s;
}

int64_t SampleObjectSize(const Sample& sample) {
  for (const Label& label : sample.labels) {
    if (label.key == "bytes" && label.str.empty()) return label.num;
  }
  return -1;
}

Interval Confidence95(double value, double variance) {
  double half = 1.959963984540054 * std::sqrt(variance > 0 ? variance : 0.0);
  double low = value - half;
  return {low < 0 ? 0.0 : low, value + half};
}

bool IsSampled(const Profile& profile) { return profile.period > 1; }

}  // namespace heaprec
