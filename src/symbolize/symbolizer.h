// Offline symbolization of heaprec profiles: fills Location.lines and Function entries from the
// binaries (and their DWARF, possibly in separate debug files) named by the profile's mappings.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "profile/profile.h"

namespace heaprec::symbolize {

struct SymbolizeStats {
  size_t locations = 0;          // all locations in the profile
  size_t symbolized = 0;         // have lines after the call (including those that already had)
  size_t no_file = 0;            // mapping file missing, unreadable, a pseudo file ([vdso]), ...
  size_t build_id_mismatch = 0;  // the file was replaced by a different build, no debug file
  size_t no_symbols = 0;         // file opened, but nothing known at that address
  size_t renamed = 0;  // had a name from a symbol table only, replaced by what the files give
};

// Where distributions install separate debug files (the -dbgsym, -debuginfo packages).
inline constexpr char kSystemDebugPath[] = "/usr/lib/debug";

// Where binaries and their debug files are looked for: file_search.h gives the order.
struct SymbolizeOptions {
  // Directories holding binaries that are no longer (or never were) at the path the profile
  // recorded, searched as pprof searches PPROF_BINARY_PATH.
  std::vector<std::string> binary_paths{};
  // Directories of separate debug files, as GDB's debug-file-directory: DIR/.build-id/xx/rest.debug
  // and DIR/<binary's directory>/<its .gnu_debuglink name>.
  std::vector<std::string> debug_paths = {kSystemDebugPath};
  // debuginfod servers, separated by spaces as in DEBUGINFOD_URLS; "" for none.
  std::string debuginfod_urls{};
  // Where answers are kept across runs, by build id and DWARF file (symbol_cache.h); "" for none
  // (--no-cache). The CLI uses SymbolCache::DefaultDirectory().
  std::string cache_directory{};
};

// The options of heaprec's commands, from the environment: binary paths from HEAPREC_BINARY_PATH,
// else PPROF_BINARY_PATH (colon-separated); debug paths from HEAPREC_DEBUG_PATH, then always
// /usr/lib/debug; debuginfod servers from DEBUGINFOD_URLS; the cache directory of symbol_cache.h.
SymbolizeOptions CommandLineSymbolizeOptions();

// A binary that named none of the locations it was asked about.
struct UnresolvedBinary {
  enum class Reason {
    kNotFound,     // no file of its build anywhere (other builds may have been refused)
    kNoDebugInfo,  // found (`found_binary`), but neither it nor a debug file names its addresses
  };
  Reason reason = Reason::kNotFound;
  std::string path;      // as the profile recorded it
  std::string build_id;  // "" when unknown
  std::string found_binary;
  std::vector<std::string> looked_in;  // FoundFiles::looked_in
  size_t locations = 0;                // its locations, over every profile, without a name
};

// A binary some of whose locations were named from the on-disk cache (symbol_cache.h): answers
// an earlier run got from the same DWARF file, found again by this run's search.
struct CachedBinary {
  std::string path;  // as the profile recorded it
  std::string build_id;
  std::string dwarf_file;  // the file whose DWARF the answers came from
  std::string cache_file;  // where they were kept
  size_t locations = 0;    // named from the cache, over every profile
};

class SymbolCache;
class DebuginfodClient;

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
  // mappings' has_* flags accordingly; a location of a mapping named from symbol tables only
  // (has_functions without files or line numbers, as the HTTP endpoint serves them) gets what the
  // files give in place of its name, and keeps it when they give nothing. Idempotent. Never throws
  // for unreadable binaries: they are only counted.
  SymbolizeStats Symbolize(profile::Profile& profile);

  // The binaries with a path (not "[vdso]" and the like) from which no location of any profile
  // symbolized so far got a name, in the order they were met.
  std::vector<UnresolvedBinary> Unresolved() const;
  // The binaries some of whose locations the cache named, in the order they were met.
  std::vector<CachedBinary> FromCache() const;

  struct Module;

 private:
  Module& ModuleFor(const profile::Mapping& mapping);

  SymbolizeOptions options_;
  std::unordered_map<std::string, std::unique_ptr<Module>> modules_;
  std::vector<const Module*> met_;  // modules_ in the order they were met
  std::unique_ptr<DebuginfodClient> debuginfod_;
  std::unique_ptr<SymbolCache> cache_;
};

// One profile with a Symbolizer of its own.
SymbolizeStats Symbolize(profile::Profile& profile, const SymbolizeOptions& options = {});

}  // namespace heaprec::symbolize
