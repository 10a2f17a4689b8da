// Decoding of pprof files (gzipped or raw profile.proto) into the Profile model, with validation
// of every cross reference so that later code can trust ids and indexes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "profile/profile.h"
#include "profile/profile_error.h"

namespace heaprec {

// Largest profile we agree to hold in memory, compressed or not. A gzip stream that inflates past
// it is rejected, so a small hostile file cannot make us allocate without bound.
inline constexpr size_t kMaxProfileBytes = size_t{1} << 30;  // 1 GiB

struct ReadOptions {
  size_t max_decompressed_bytes = kMaxProfileBytes;
};

// Decodes `bytes` (gzip or raw protobuf). `source` names the data in error messages. Throws
// ProfileError on anything malformed or inconsistent; never crashes on hostile input.
Profile ReadProfile(std::string_view bytes, std::string_view source = "<memory>",
                    const ReadOptions& options = {});

// Reads and decodes the file at `path`; errors name the path.
Profile ReadProfileFile(const std::string& path, const ReadOptions& options = {});

}  // namespace heaprec
