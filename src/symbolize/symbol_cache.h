// What symbolization learnt about a binary, kept on disk across runs, keyed by the binary's GNU
// build id: a build id names one exact binary, so its answers never go stale, wherever its file is
// now (or whether it still exists). One file per build id, `<directory>/<build-id>`, of text lines
// `<file offset hex>\t<from_dwarf>\t<frame count>` then six tab-separated fields per frame.
//
// Each file starts with a stamp naming the heaprec that wrote it (its own build id): answers from
// another build of the symbolizer are ignored, never mixed in. Files are replaced whole
// (base/file_io.h: a private temporary file renamed over the old one), so a reader never sees a
// half-written one; two runs saving at once lose at worst the other's new answers, which are only a
// cache.
//
// The directory: $HEAPREC_CACHE_DIR, else $XDG_CACHE_HOME/heaprec/symbols, else
// $HOME/.cache/heaprec/symbols; HEAPREC_CACHE_DIR=off disables the cache.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "symbolize/dwarf_lookup.h"

namespace heaprec::symbolize {

class SymbolCache {
 public:
  // The directory from the environment, "" when disabled or unknown.
  static std::string DefaultDirectory();

  explicit SymbolCache(std::string directory);
  ~SymbolCache();  // saves
  SymbolCache(const SymbolCache&) = delete;
  SymbolCache& operator=(const SymbolCache&) = delete;

  // The answer known for this build id at this file offset, or null.
  const FrameLookup* Find(const std::string& build_id, std::uint64_t file_offset);
  void Add(const std::string& build_id, std::uint64_t file_offset, const FrameLookup& lookup);
  // Writes every build id's file that got new answers. Never throws: a cache that cannot be
  // written is only a slower next run.
  void Save();

 private:
  struct Binary {
    std::unordered_map<std::uint64_t, FrameLookup> answers;
    bool loaded = false;
    bool dirty = false;
  };
  Binary& Load(const std::string& build_id);

  std::string directory_;
  std::string stamp_;
  std::unordered_map<std::string, Binary> binaries_;
};

}  // namespace heaprec::symbolize
