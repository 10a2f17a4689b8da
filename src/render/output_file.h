// Every file heaprec's commands write (profiles, flame pages, charts) is replaced atomically,
// through a private temporary file and rename(2): readers see the old file or the complete new
// one, and a crash or a full disk never leaves a truncated file behind.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "profile/profile.h"

namespace heaprec::render {

// A file could not be written. what() is one line naming the path and the reason.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Writes `data` to a new 0600 file next to `path` (profiles and what is made of them reveal
// program internals), then renames it over `path`. On any failure the temporary file is removed
// and OutputError is thrown; `path` is left untouched.
void WriteFileAtomically(const std::string& path, std::string_view data);

// The profile, gzipped (profile/pprof_writer.h), written atomically to `path`.
void WriteProfileFile(const profile::Profile& profile, const std::string& path);

}  // namespace heaprec::render
