#include "cli/symbolization.h"

#include <exception>
#include <ostream>

#include "cli/option_helpers.h"
#include "profile/pprof_reader.h"
#include "render/output_file.h"

namespace heaprec::cli {
namespace {

// "a:b" and "c" as given to a repeatable option: a, b, c.
std::vector<std::string> SplitColonLists(const std::vector<std::string>& values) {
  std::vector<std::string> dirs;
  for (const std::string& value : values) {
    std::string::size_type start = 0;
    while (start <= value.size()) {
      std::string::size_type colon = value.find(':', start);
      if (colon == std::string::npos) colon = value.size();
      if (colon > start) dirs.push_back(value.substr(start, colon - start));
      start = colon + 1;
    }
  }
  return dirs;
}

std::string Joined(const std::vector<std::string>& items, const char* separator) {
  std::string text;
  for (const std::string& item : items) {
    if (!text.empty()) text += separator;
    text += item;
  }
  return text;
}

}  // namespace

void AddSymbolSearchOptions(CLI::App* command, SymbolSearchArgs& args) {
  const char* group = "Symbolization";
  AddRepeatableOption(command, "--binary-path", args.binary_paths,
                      "Directory of binaries (or a colon-separated list; repeatable), searched by "
                      "build id and by name as pprof searches PPROF_BINARY_PATH; before "
                      "$HEAPREC_BINARY_PATH (else $PPROF_BINARY_PATH)",
                      "DIR")
      ->group(group);
  AddRepeatableOption(command, "--debug-path", args.debug_paths,
                      "Directory of separate debug files: DIR/.build-id/xx/rest.debug, "
                      "DIR/<binary's dir>/<debuglink> (repeatable); before $HEAPREC_DEBUG_PATH and "
                      "/usr/lib/debug",
                      "DIR")
      ->group(group);
  AddRepeatableOption(command, "--debuginfod", args.debuginfod_urls,
                      "debuginfod server to fetch debug files from by build id (repeatable); "
                      "instead of $DEBUGINFOD_URLS",
                      "URL")
      ->group(group);
  command
      ->add_flag("!--no-cache", args.cache,
                 "Neither read nor write the on-disk symbol cache ($HEAPREC_CACHE_DIR, else "
                 "~/.cache/heaprec/symbols)")
      ->group(group);
}

symbolize::SymbolizeOptions MakeSymbolizeOptions(const SymbolSearchArgs& args) {
  symbolize::SymbolizeOptions options = symbolize::CommandLineSymbolizeOptions();
  std::vector<std::string> binary_paths = SplitColonLists(args.binary_paths);
  binary_paths.insert(binary_paths.end(), options.binary_paths.begin(), options.binary_paths.end());
  options.binary_paths = std::move(binary_paths);
  std::vector<std::string> debug_paths = SplitColonLists(args.debug_paths);
  debug_paths.insert(debug_paths.end(), options.debug_paths.begin(), options.debug_paths.end());
  options.debug_paths = std::move(debug_paths);
  if (!args.debuginfod_urls.empty()) options.debuginfod_urls = Joined(args.debuginfod_urls, " ");
  if (!args.cache) options.cache_directory.clear();
  return options;
}

SymbolizedTables SymbolizeTables(symbolize::Symbolizer& symbolizer, profile::Profile& tables) {
  const symbolize::Coverage before = symbolize::MeasureCoverage(tables);
  SymbolizedTables result;
  result.stats = symbolizer.Symbolize(tables);
  result.after = symbolize::MeasureCoverage(tables);
  result.gained = result.after.unnamed < before.unnamed || result.stats.renamed > 0;
  return result;
}

bool SymbolizeFileInPlace(const std::string& file, const symbolize::SymbolizeOptions& options,
                          const std::string& prefix, std::ostream& notes) {
  try {
    symbolize::Symbolizer symbolizer(options);
    profile::RewritableProfile profile = profile::ReadRewritableProfileFile(file);
    if (SymbolizeTables(symbolizer, profile.tables).gained) {
      base::RecyclingWriter writer{base::Durability::kSyncedBeforeRename};
      render::WriteProfileFile(profile, file, &writer);
    }
    PrintBinaryNotes(prefix, symbolizer, notes);
    return true;
  } catch (const std::exception& error) {
    notes << prefix << ": " << error.what() << "\n";
    return false;
  }
}

size_t PrintBinaryNotes(const std::string& prefix, const symbolize::Symbolizer& symbolizer,
                        std::ostream& out) {
  size_t not_found = 0;
  for (const symbolize::UnresolvedBinary& b : symbolizer.Unresolved()) {
    const bool found = b.reason == symbolize::UnresolvedBinary::Reason::kNoDebugInfo;
    not_found += found ? 0 : 1;
    out << prefix << ": " << (found ? "no debug info for " : "no binary for ") << b.path;
    if (!b.build_id.empty()) out << " (build id " << b.build_id << ")";
    if (found && b.found_binary != b.path) out << ", found as " << b.found_binary;
    if (!b.looked_in.empty()) out << ": looked in " << Joined(b.looked_in, ", ");
    out << "\n";
  }
  return not_found;
}

void PrintCachedBinaries(const std::string& prefix, const symbolize::Symbolizer& symbolizer,
                         std::ostream& out) {
  for (const symbolize::CachedBinary& b : symbolizer.FromCache()) {
    out << prefix << ": " << b.locations << (b.locations == 1 ? " name" : " names") << " for "
        << b.path;
    if (!b.build_id.empty()) out << " (build id " << b.build_id << ")";
    out << " from the symbol cache " << b.cache_file << ", kept from the DWARF of " << b.dwarf_file
        << " (--no-cache to look them up again)\n";
  }
}

InMemorySymbolization::InMemorySymbolization(std::string command, const SymbolSearchArgs& args)
    : command_(std::move(command)), args_(args) {}

InMemorySymbolization::~InMemorySymbolization() = default;

void InMemorySymbolization::Symbolize(profile::Profile& profile, const std::string& file) {
  ++profiles_;
  const symbolize::Coverage before = symbolize::MeasureCoverage(profile);
  if (!before.NeedsSymbolizing()) return;
  if (!symbolizer_) {
    symbolizer_ = std::make_unique<symbolize::Symbolizer>(MakeSymbolizeOptions(args_));
  }
  symbolizer_->Symbolize(profile);
  symbolize::Coverage after = symbolize::MeasureCoverage(profile);
  if (!after.complete()) remaining_.push_back({file, after});
}

void InMemorySymbolization::PrintRemaining(std::ostream& out, bool one_line) const {
  // Locations a found binary has no symbol for stay unnamed however often it is symbolized: only
  // a binary not found, or without debug info, is worth a word.
  const std::string prefix = "heaprec " + command_;
  if (!symbolizer_) return;
  const bool unresolved = !symbolizer_->Unresolved().empty();
  PrintBinaryNotes(prefix, *symbolizer_, out);
  if (!unresolved) return;
  if (remaining_.empty()) return;
  const char* advice =
      "give --binary-path, --debug-path or --debuginfod, or run heaprec symbolize where its "
      "binaries are";
  if (!one_line && remaining_.size() <= 2) {
    for (const Remaining& r : remaining_) {
      out << prefix << ": " << r.file << " is not "
          << (r.coverage.unnamed < r.coverage.locations ? "fully " : "") << "symbolized ("
          << r.coverage.unnamed << " of " << r.coverage.locations
          << " locations have no function name); " << advice << "\n";
    }
    return;
  }
  size_t unnamed = 0, locations = 0;
  for (const Remaining& r : remaining_) {
    unnamed += r.coverage.unnamed;
    locations += r.coverage.locations;
  }
  out << prefix << ": " << remaining_.size() << " of " << profiles_
      << (remaining_.size() == 1 ? " profile is" : " profiles are") << " not fully symbolized ("
      << unnamed << " of " << locations
      << " of their locations have no function name, shown as addresses); " << advice << "\n";
}

}  // namespace heaprec::cli
