// What symbolization learnt about a binary from DWARF, kept on disk across runs, keyed by the
// binary's GNU build id AND the file whose DWARF gave the answers (its path, size and modification
// time: Source): the cache is consulted only once the search (file_search.h) has found that very
// file again, so it only saves reading its DWARF index. It never answers for a build whose files
// are gone, nor with an answer other than the files give now (names from a debug file found in an
// earlier run, while this run finds only the stripped binary, would make a command's result depend
// on its history). Answers from symbol tables, and misses, are never kept. One file per build id
// and source, `<directory>/<build-id>.<16 hex digits of the source's hash>`, whose second line is
// `source\t<source>` and whose other lines are
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

  // What identifies the DWARF of `dwarf_file` (a binary with DWARF, or a separate debug file):
  // "dwarf PATH SIZE MTIME_NS", "" when it cannot be read.
  static std::string Source(const std::string& dwarf_file);

  // The answer known for this build id, from this source, at this file offset, or null.
  const FrameLookup* Find(const std::string& build_id, const std::string& source,
                          std::uint64_t file_offset);
  void Add(const std::string& build_id, const std::string& source, std::uint64_t file_offset,
           const FrameLookup& lookup);
  // The file that keeps the answers of this build id and source ("" when there is no cache).
  std::string FileFor(const std::string& build_id, const std::string& source) const;
  // Writes every build id's file that got new answers. Never throws: a cache that cannot be
  // written is only a slower next run.
  void Save();

 private:
  struct Binary {
    std::string file;
    std::string source;
    std::unordered_map<std::uint64_t, FrameLookup> answers;
    bool loaded = false;
    bool dirty = false;
  };
  Binary& Load(const std::string& build_id, const std::string& source);

  std::string directory_;
  std::string stamp_;
  std::unordered_map<std::string, Binary> binaries_;
};

}  // namespace heaprec::symbolize
