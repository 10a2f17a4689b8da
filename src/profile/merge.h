// Many profiles as one, as `pprof` merges them (docs/design/merge.md): a pool's workers, a build's
// compiler processes, a fleet's instances, shown by the reading commands as one profile.
//
// Samples with the same stack and the same labels are one sample, their values summed. A stack is
// the same when its locations are: a symbolized location by its mapping's file and build id and its
// lines (function name, system name, file, start line, line), so that one function loaded at other
// addresses (ASLR, other processes) is one location; an unsymbolized one by its mapping's file and
// build id and its address as an offset in that file. Labels are kept as they are (an object size,
// a thread, an age): samples that differ in a label stay apart, as in pprof.
//
// The sampling-error model (sampling_error.h) reads one sampling interval per profile and a
// sample's object size from its `bytes` label; the variance it derives is linear in the sampled
// objects, so summing samples of one (stack, size) keeps it right, but only when every input had
// the same interval. Profiles of different intervals (or sampling models) are refused, as profiles
// of different sample types are.
#pragma once

#include <string>
#include <vector>

#include "profile/profile.h"
#include "profile/profile_error.h"

namespace heaprec::profile {

// Throws ProfileError naming both profiles (`names[i]`, else "profile #i") when `profiles[i]`
// cannot be merged with the first: other sample types, period type or sampling interval.
void CheckMergeable(const std::vector<Profile>& profiles, const std::vector<std::string>& names);

// The profiles as one (see above). One profile is returned unchanged. Of the header: the sample
// types, period and period type are the (common) inputs'; time_nanos the earliest, duration up to
// the latest end; drop/keep frames and the default sample type the first's; the comments keep the
// NAME=VALUE fields every input has with the same value, after one "merged=N" field. Throws what
// CheckMergeable throws; ProfileError for no profiles.
Profile MergeProfiles(std::vector<Profile> profiles, const std::vector<std::string>& names = {});

}  // namespace heaprec::profile
