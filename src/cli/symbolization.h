// What every command that reads profiles shares about symbolization: the options that say where
// binaries and debug files are (over the environment's, symbolize/symbolizer.h), the line naming
// each binary that could not be resolved, and, for report, flame, diff and leaks, symbolizing in
// memory what a file lacks (never rewriting it, as pprof does) with a line for what remains.
#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "profile/profile.h"
#include "symbolize/coverage.h"
#include "symbolize/symbolizer.h"

namespace heaprec::cli {

struct SymbolSearchArgs {
  std::vector<std::string> binary_paths;  // each may be a colon-separated list
  std::vector<std::string> debug_paths;
  std::vector<std::string> debuginfod_urls;
  bool cache = true;  // false: --no-cache
};

// --binary-path DIR, --debug-path DIR, --debuginfod URL (each repeatable), --no-cache.
void AddSymbolSearchOptions(CLI::App* command, SymbolSearchArgs& args);

// The options' directories, then the environment's (CommandLineSymbolizeOptions); --debuginfod
// URLs replace DEBUGINFOD_URLS.
symbolize::SymbolizeOptions MakeSymbolizeOptions(const SymbolSearchArgs& args);

// One line per binary from which nothing could be named, "PREFIX: no binary for PATH (build id
// ID): looked in A, B, ..." or "PREFIX: no debug info for ...". Returns how many binaries were not
// found at all (no debug info: found, but with nothing to name its addresses, is not counted).
size_t PrintBinaryNotes(const std::string& prefix, const symbolize::Symbolizer& symbolizer,
                        std::ostream& out);

// What symbolizing a profile's tables did: its stats, the coverage after, and whether the profile
// gained names (else its file need not be rewritten).
struct SymbolizedTables {
  symbolize::SymbolizeStats stats;
  symbolize::Coverage after;
  bool gained = false;
};
SymbolizedTables SymbolizeTables(symbolize::Symbolizer& symbolizer, profile::Profile& tables);

// Symbolizes the profile at `file` in place with `options`, rewriting it only when it gained names,
// then says which binaries could not be resolved (PrintBinaryNotes). False, after one line saying
// why, when it could not be read or written.
bool SymbolizeFileInPlace(const std::string& file, const symbolize::SymbolizeOptions& options,
                          const std::string& prefix, std::ostream& notes);

// For the commands whose job is symbolizing (symbolize, fetch): one line per binary some of whose
// names came from the on-disk cache, "PREFIX: N names for PATH (build id ID) from the symbol cache
// FILE, kept from the DWARF of DWARF_FILE (--no-cache to look them up again)". The commands that
// show profiles, and heaprec run, say nothing of it: the cache answers only for the DWARF file
// found now, so its names are the ones a look-up would give (docs/design/symbolization.md).
void PrintCachedBinaries(const std::string& prefix, const symbolize::Symbolizer& symbolizer,
                         std::ostream& out);

// For the commands that read profiles to show them: report, flame, diff, leaks.
class InMemorySymbolization {
 public:
  InMemorySymbolization(std::string command, const SymbolSearchArgs& args);
  ~InMemorySymbolization();

  // Names what it can of the profile's unnamed locations, in memory.
  void Symbolize(profile::Profile& profile, const std::string& file);

  // When some binary could not be resolved: names it (once), then says which profiles keep
  // unnamed locations, one line each, or with `one_line` (or beyond two), one line for them all.
  void PrintRemaining(std::ostream& out, bool one_line = false) const;

 private:
  struct Remaining {
    std::string file;
    symbolize::Coverage coverage;
  };
  std::string command_;
  SymbolSearchArgs args_;
  std::unique_ptr<symbolize::Symbolizer> symbolizer_;  // made for the first profile that needs it
  std::vector<Remaining> remaining_;
  size_t profiles_ = 0;
};

}  // namespace heaprec::cli
