// Encoding of the Profile model into pprof's wire format (render/output_file.h writes the files).
#pragma once

#include <string>

#include "profile/profile.h"

namespace heaprec::profile {

// Serializes `profile` as profile.proto, gzipped by default (what pprof and heaprec write).
// Strings are deduplicated into the string table, whose entry 0 is "".
std::string EncodeProfile(const Profile& profile, bool gzip = true);

}  // namespace heaprec::profile
