// `heaprec symbolize PATH... [-o OUT]`: adds function names, files and lines to profiles (files,
// and the profiles of directories) from the binaries and debug files they name, so that they can
// be read on another machine or after the binaries change. One Symbolizer serves every file: the
// profiles of one program name the same binaries over and over.
#include <filesystem>
#include <iostream>
#include <memory>
#include <system_error>

#include "cli/commands.h"
#include "cli/profile_files.h"
#include "cli/symbolization.h"
#include "profile/pprof_reader.h"
#include "render/output_file.h"
#include "symbolize/coverage.h"
#include "symbolize/symbolizer.h"

namespace heaprec::cli {
namespace {

struct SymbolizeArgs {
  std::vector<std::string> paths;
  std::string output;
  SymbolSearchArgs search;
};

struct Totals {
  size_t profiles = 0;
  symbolize::SymbolizeStats stats;
  void Add(const symbolize::SymbolizeStats& s) {
    ++profiles;
    stats.locations += s.locations;
    stats.symbolized += s.symbolized;
    stats.no_file += s.no_file;
    stats.build_id_mismatch += s.build_id_mismatch;
    stats.no_symbols += s.no_symbols;
    stats.renamed += s.renamed;
  }
};

std::string Summary(const Totals& t) {
  const symbolize::SymbolizeStats& s = t.stats;
  std::string text = "heaprec symbolize: symbolized " + std::to_string(s.symbolized) + " of " +
                     std::to_string(s.locations) + " locations in " + std::to_string(t.profiles) +
                     (t.profiles == 1 ? " profile" : " profiles");
  if (s.no_file) text += "; " + std::to_string(s.no_file) + " without a binary";
  if (s.build_id_mismatch) {
    text += "; " + std::to_string(s.build_id_mismatch) + " whose binary is another build";
  }
  if (s.no_symbols) text += "; " + std::to_string(s.no_symbols) + " without symbols";
  return text;
}

bool IsDirectory(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

int RunSymbolize(const SymbolizeArgs& args) {
  if (!args.output.empty() && (args.paths.size() != 1 || IsDirectory(args.paths[0]))) {
    std::cerr << "heaprec symbolize: -o writes one profile, but "
              << (args.paths.size() != 1 ? std::to_string(args.paths.size()) + " paths were given"
                                         : args.paths[0] + " is a directory")
              << " (without -o, each profile is symbolized in place)\n";
    return kExitUsage;
  }
  std::vector<std::string> files = CollectProfileFiles(args.paths);
  symbolize::Symbolizer symbolizer(MakeSymbolizeOptions(args.search));
  // One file's old inode holds the next. Synced: the profiles replaced may be old and precious.
  base::RecyclingWriter in_place{base::Durability::kSyncedBeforeRename};
  Totals totals;
  std::vector<std::string> unnamed_files;  // not one location named
  bool failed = false;
  for (const std::string& file : files) {
    try {
      // The samples stay encoded: symbolizing changes only the tables.
      profile::RewritableProfile profile = profile::ReadRewritableProfileFile(file);
      const SymbolizedTables done = SymbolizeTables(symbolizer, profile.tables);
      totals.Add(done.stats);
      // In place, a file is rewritten only when it gained something.
      if (!args.output.empty()) {
        render::WriteProfileFile(profile, args.output);
      } else if (done.gained) {
        render::WriteProfileFile(profile, file, &in_place);
      }
      const symbolize::Coverage& after = done.after;
      if (after.locations > 0 && after.unnamed == after.locations) unnamed_files.push_back(file);
    } catch (const std::exception& error) {
      std::cerr << "heaprec symbolize: " << error.what() << "\n";
      failed = true;
    }
  }
  if (totals.profiles == 0) return kExitFailure;  // each failure said why
  size_t not_found = PrintBinaryNotes("heaprec symbolize", symbolizer, std::cerr);
  PrintCachedBinaries("heaprec symbolize", symbolizer, std::cerr);
  for (const std::string& file : unnamed_files) {
    std::cerr << "heaprec symbolize: " << file << ": no location could be symbolized\n";
  }
  std::cerr << Summary(totals) << "\n";
  return failed || not_found > 0 || !unnamed_files.empty() ? kExitFailure : kExitOk;
}

}  // namespace

void RegisterSymbolizeCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<SymbolizeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "symbolize",
      "Add function names and source lines to profiles, from the binaries and debug info they "
      "refer to (rewrites each file in place unless -o is given).");
  cmd->add_option("PATHS", args->paths,
                  "Profiles written by heaprec, or directories holding them (*.pb.gz)")
      ->required();
  cmd->add_option("-o,--output", args->output,
                  "Write the symbolized profile here instead (one input file only)")
      ->option_text("FILE");
  AddSymbolSearchOptions(cmd, args->search);
  cmd->footer(
      "Where binaries and debug files are looked for, in order: the path the profile recorded;\n"
      "--binary-path and $HEAPREC_BINARY_PATH (else $PPROF_BINARY_PATH) directories; separate\n"
      "debug files beside the binary, then in --debug-path, $HEAPREC_DEBUG_PATH and\n"
      "/usr/lib/debug; then debuginfod ($DEBUGINFOD_URLS or --debuginfod), by build id. A file\n"
      "of another build (another build id) is never used; a stripped file at the recorded path\n"
      "gives way to its unstripped build (same build id) in a binary path. Answers from DWARF are\n"
      "kept in the symbol cache, used only when the same DWARF file is found again, and said so\n"
      "(--no-cache bypasses it).\n"
      "Exit status: 0 when every binary was found; 1 when a binary was not found (each is named,\n"
      "with where it was looked for), a profile got no name at all, or a file could not be read\n"
      "or written; 2 for a bad command line.\n"
      "Examples:\n"
      "  heaprec symbolize heaprec.myprogram.1234.pb.gz\n"
      "  heaprec symbolize --binary-path /srv/app/bin --debug-path /srv/app/debug profiles/\n"
      "  heaprec symbolize --no-cache --binary-path build/unstripped heap.pb.gz\n"
      "  DEBUGINFOD_URLS=https://debuginfod.debian.net heaprec symbolize -o out.pb.gz p.pb.gz");
  cmd->callback([args, exit_code] {
    *exit_code = RunReportingErrors("symbolize", [&] { return RunSymbolize(*args); });
  });
}

}  // namespace heaprec::cli
