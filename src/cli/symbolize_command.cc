// `heaprec symbolize FILE [-o OUT]`: adds function names, files and lines to a profile from the
// binaries it names, so that it can be read on another machine or after the binaries change.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "profile/pprof_reader.h"
#include "render/output_file.h"
#include "symbolize/symbolizer.h"

namespace heaprec::cli {
namespace {

struct SymbolizeArgs {
  std::string file;
  std::string output;
};

std::string Summary(const symbolize::SymbolizeStats& s) {
  std::string text = "symbolized " + std::to_string(s.symbolized) + " of " +
                     std::to_string(s.locations) + " locations";
  if (s.no_file) text += "; " + std::to_string(s.no_file) + " without a readable binary";
  if (s.build_id_mismatch) {
    text += "; " + std::to_string(s.build_id_mismatch) + " whose binary has a different build id";
  }
  if (s.no_symbols) text += "; " + std::to_string(s.no_symbols) + " without symbols";
  return text;
}

int RunSymbolize(const SymbolizeArgs& args) {
  profile::Profile profile = profile::ReadProfileFile(args.file);
  symbolize::SymbolizeStats stats =
      symbolize::Symbolize(profile, symbolize::CommandLineSymbolizeOptions());
  render::WriteProfileFile(profile, args.output.empty() ? args.file : args.output);
  std::cerr << Summary(stats) << "\n";
  return kExitOk;
}

}  // namespace

void RegisterSymbolizeCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<SymbolizeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "symbolize",
      "Add function names and source lines to a profile, from the binaries and debug info it "
      "refers to.\n"
      "Rewrites FILE in place unless -o is given; do it on the machine that ran the program, so "
      "that the profile can be read anywhere.");
  cmd->add_option("FILE", args->file, "Profile written by heaprec")->required();
  cmd->add_option("-o,--output", args->output, "Write the symbolized profile here instead")
      ->option_text("FILE");
  cmd->footer(
      "Examples:\n"
      "  heaprec symbolize heaprec.myprogram.1234.pb.gz\n"
      "  heaprec symbolize -o symbolized.pb.gz heaprec.myprogram.1234.pb.gz");
  cmd->callback([args, exit_code] {
    *exit_code = RunReportingErrors("symbolize", [&] { return RunSymbolize(*args); });
  });
}

}  // namespace heaprec::cli
