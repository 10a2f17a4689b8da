// Offline symbolization of heaprec profiles: fills Location.lines and Function entries from the
// binaries (and their DWARF, possibly in separate debug files) named by the profile's mappings.
#pragma once

#include <cstddef>
#include <string>

#include "profile/profile.h"

namespace heaprec {

struct SymbolizeStats {
  size_t locations = 0;          // all locations in the profile
  size_t symbolized = 0;         // have lines after the call (including those that already had)
  size_t no_file = 0;            // mapping file missing, unreadable, a pseudo file ([vdso]), ...
  size_t build_id_mismatch = 0;  // the file was replaced by a different build, no debug file
  size_t no_symbols = 0;         // file opened, but nothing known at that address
};

struct SymbolizeOptions {
  // Root of the separate debug info tree; `<root>/.build-id/xx/rest.debug` is tried when the
  // mapped file is gone or was replaced.
  std::string debug_root = "/usr/lib/debug";
};

// Symbolizes every location that has no lines yet and whose binary can be opened, and sets the
// mappings' has_* flags accordingly. Idempotent. Never throws for unreadable binaries: they are
// only counted.
SymbolizeStats Symbolize(Profile& profile, const SymbolizeOptions& options = {});

}  // namespace heaprec
