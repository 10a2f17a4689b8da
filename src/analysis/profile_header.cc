#include "analysis/profile_header.h"

#include "profile/sampling_error.h"

namespace heaprec::analysis {

ProfileHeader HeaderOf(const profile::Profile& profile) {
  return {.period = profile.period,
          .period_type = profile.period_type,
          .per_object = profile::SamplingModel(profile).per_object,
          .comments = profile.comments};
}

}  // namespace heaprec::analysis
