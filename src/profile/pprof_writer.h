// Encoding of the Profile model into pprof's wire format, and atomic writing of profile files.
#pragma once

#include <string>

#include "profile/profile.h"
#include "profile/profile_error.h"

namespace heaprec {

// Serializes `profile` as profile.proto, gzipped by default (what pprof and heaprec write).
// Strings are deduplicated into the string table, whose entry 0 is "".
std::string EncodeProfile(const Profile& profile, bool gzip = true);

// Writes the gzipped profile to `path` atomically: readers see the old file or the complete new
// one, never a partial file. The file gets mode 0600 because profiles reveal program internals.
// Throws ProfileError naming the path on failure.
void WriteProfileFile(const Profile& profile, const std::string& path);

}  // namespace heaprec
