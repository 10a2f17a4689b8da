// How old the objects of a sample are: what the leak series shows as a site's age. Profiles carry
// it as the label `age_ns` (schema/profile_schema.h): the age of the sample's oldest live object
// when the profile was taken. Profiles written before that label carry `oldest_alloc_ns` instead,
// the oldest object's allocation time on the realtime clock, which gives the same age against the
// profile's time_nanos.
#pragma once

#include <cstdint>

#include "profile/profile.h"

namespace heaprec::analysis {

// The age in nanoseconds of the oldest live object of `sample` (a sample of `profile`) at the
// profile's time, from its `age_ns` label or an older file's `oldest_alloc_ns` (0 for an
// allocation time after the profile's); -1 when the sample has neither.
int64_t SampleAgeNanos(const profile::Profile& profile, const profile::Sample& sample);

}  // namespace heaprec::analysis
