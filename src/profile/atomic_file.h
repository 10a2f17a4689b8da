// Atomic replacement of a file through a private temporary file and rename(2).
#pragma once

#include <string>
#include <string_view>

namespace heaprec::internal {

// Writes `data` to a new 0600 file next to `path`, then renames it over `path`. On any failure
// the temporary file is removed and ProfileError is thrown; `path` is left untouched.
void WriteFileAtomically(const std::string& path, std::string_view data);

}  // namespace heaprec::internal
