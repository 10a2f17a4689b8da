#include "core/object_sampler.h"

#include <cmath>

namespace heaprec {

void ObjectSampler::Configure(std::uint64_t every, std::uint64_t seed) {
  every_ = every == 0 ? 1 : every;
  Sampler::Seed(rng_, seed, 1);
  objects_until_sample_ = NextGap();
}

std::int64_t ObjectSampler::NextGap() {
  if (every_ == 1) return 1;
  // Inversion: with U uniform in (0, 1], ceil(log U / log(1 - p)) is Geometric(p) on 1, 2, ...
  // (U = 1 gives 0, which is clamped: a probability-zero event in the continuous limit).
  double p = 1.0 / static_cast<double>(every_);
  double gap = std::ceil(std::log(Sampler::NextUniform(rng_)) / std::log1p(-p));
  if (!(gap >= 1.0)) return 1;
  if (gap > 4.0e18) return static_cast<std::int64_t>(4.0e18);
  return static_cast<std::int64_t>(gap);
}

}  // namespace heaprec
