#include "analysis/profile_header.h"

#include "profile/sampling_error.h"

namespace heaprec::analysis {

ProfileHeader HeaderOf(const profile::Profile& profile) {
  ProfileHeader header{.period = profile.period,
                       .period_type = profile.period_type,
                       .per_object = profile::SamplingModel(profile).per_object};
  for (const std::string& comment : profile.comments) {
    if (comment.rfind('#', 0) != 0) {
      header.comments.push_back(comment);
    } else if (!header.timeline) {
      header.timeline = ParseTimeline(comment);
    }
  }
  return header;
}

}  // namespace heaprec::analysis
