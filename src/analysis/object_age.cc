#include "analysis/object_age.h"

#include "analysis/profile_view.h"
#include "schema/profile_schema.h"

namespace heaprec::analysis {

int64_t SampleAgeNanos(const profile::Profile& profile, const profile::Sample& sample) {
  int64_t age = NumericLabel(sample, schema::kAgeLabel);
  if (age >= 0) return age;
  int64_t allocated = NumericLabel(sample, schema::kOldestAllocLabel);
  if (allocated <= 0) return -1;  // absent, or no time: the writers wrote none for "unknown"
  return allocated < profile.time_nanos ? profile.time_nanos - allocated : 0;
}

}  // namespace heaprec::analysis
