#include "analysis/profile_header.h"

#include "analysis/profile_view.h"
#include "profile/sampling_error.h"
#include "schema/profile_schema.h"

namespace heaprec::analysis {

ProfileHeader HeaderOf(const profile::Profile& profile) {
  ProfileHeader header{.period = profile.period,
                       .period_type = profile.period_type,
                       .per_object = profile::SamplingModel(profile).per_object};
  if (header.per_object) {
    for (const profile::Sample& s : profile.samples) {
      header.native_byte_interval = NumericLabel(s, schema::kByteIntervalLabel);
      if (header.native_byte_interval > 0) break;
    }
    if (header.native_byte_interval < 0) header.native_byte_interval = 0;
  }
  for (const std::string& comment : profile.comments) {
    if (comment.rfind('#', 0) != 0) {
      header.comments.push_back(comment);
    } else if (!header.timeline) {
      header.timeline = ParseTimeline(comment);
    }
  }
  header.attach = AttachFactsOf(profile);
  return header;
}

}  // namespace heaprec::analysis
