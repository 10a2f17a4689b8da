// zlib helpers shared by the pprof reader and writer: gzip detection, bounded inflation and
// deflation. Internal to heaprec_profile.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace heaprec::profile::internal {

bool LooksGzipped(std::string_view bytes);

// Inflates one or more concatenated gzip members. Throws ProfileError (prefixed with `source`)
// when the data is corrupt, truncated, or inflates to more than `max_bytes`.
std::string Gunzip(std::string_view bytes, size_t max_bytes, std::string_view source);

std::string Gzip(std::string_view bytes);

}  // namespace heaprec::profile::internal
