// Encoding of the Profile model into pprof's wire format (render/output_file.h writes the files).
#pragma once

#include <string>

#include "profile/pprof_reader.h"
#include "profile/profile.h"

namespace heaprec::profile {

// Serializes `profile` as profile.proto, gzipped by default (what pprof and heaprec write).
// Strings are deduplicated into the string table, whose entry 0 is "".
std::string EncodeProfile(const Profile& profile, bool gzip = true);

// A profile read by ReadRewritableProfile, its samples written back as they were read: the string
// table starts as the one read (the samples index it), the tables' new strings after it.
std::string EncodeProfile(const RewritableProfile& profile, bool gzip = true);

}  // namespace heaprec::profile
