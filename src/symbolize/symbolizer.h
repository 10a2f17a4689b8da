// Offline symbolization of heaprec profiles: fills Location.lines and Function entries from the
// binaries (and their DWARF, possibly in separate debug files) named by the profile's mappings.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <unordered_map>

#include "profile/profile.h"

namespace heaprec::symbolize {

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
  // Where answers are kept across runs, by build id (symbol_cache.h); "" for none. The CLI uses
  // SymbolCache::DefaultDirectory().
  std::string cache_directory;
};

// The options of heaprec's commands: the debug root above and the cache directory from the
// environment (symbol_cache.h).
SymbolizeOptions CommandLineSymbolizeOptions();

class SymbolCache;

// Symbolizes profiles, keeping what it learnt about each binary (opened once, keyed by build id,
// else path; its DWARF indexed as far as it was needed, and every address's answer) for every
// later profile: the profiles of one run name the same binaries over and over.
class Symbolizer {
 public:
  explicit Symbolizer(SymbolizeOptions options = {});
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // Symbolizes every location that has no lines yet and whose binary can be opened, and sets the
  // mappings' has_* flags accordingly. Idempotent. Never throws for unreadable binaries: they are
  // only counted.
  SymbolizeStats Symbolize(profile::Profile& profile);

  struct Module;

 private:
  SymbolizeOptions options_;
  std::unordered_map<std::string, std::unique_ptr<Module>> modules_;
  std::unique_ptr<SymbolCache> cache_;
};

// One profile with a Symbolizer of its own.
SymbolizeStats Symbolize(profile::Profile& profile, const SymbolizeOptions& options = {});

}  // namespace heaprec::symbolize
