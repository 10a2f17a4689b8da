// What a profile says of itself besides its samples: how it was sampled, and its comments. Each
// model an output prints carries the header of the profile (or the two) it was computed from, so
// that a renderer formats the model alone and a command can compute once and render twice.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/attach_facts.h"
#include "analysis/timeline.h"
#include "profile/profile.h"

namespace heaprec::analysis {

struct ProfileHeader {
  int64_t period = 0;  // the sampling interval (bytes), or 1 in `period` objects; <= 1: exact
  profile::ValueType period_type{};
  bool per_object = false;  // sampled per object (the Ruby front end's), not per byte
  // A per-object profile's native bytes, sampled per byte at this interval (the samples'
  // `byte_interval` label; the Ruby front end under `heaprec run --ruby`); 0: none.
  int64_t native_byte_interval = 0;
  // The comments people read: the profile's, but for those starting with '#', which are data (the
  // timeline), as pprof leaves them out of its header too.
  std::vector<std::string> comments{};
  std::optional<Timeline> timeline{};   // the profile's timeline comment, if it has a valid one
  std::optional<AttachFacts> attach{};  // of a process that was attached: what is not covered

  bool sampled() const { return period > 1; }
};

// The header of `profile` (per_object: profile::SamplingModel's rule).
ProfileHeader HeaderOf(const profile::Profile& profile);

}  // namespace heaprec::analysis
