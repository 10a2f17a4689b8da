// `heaprec report FILE`: prints the functions holding the most memory in a profile, like
// `pprof -top`, as text or JSON.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/symbolization.h"
#include "profile/pprof_reader.h"
#include "render/top_table.h"

namespace heaprec::cli {
namespace {

struct ReportArgs {
  std::string file;
  std::string sample_index;
  size_t top = 20;
  std::string format = "text";
  SymbolSearchArgs symbols;
};

int RunReport(const ReportArgs& args) {
  render::ReportOptions options;
  options.source = args.file;
  options.sample_index = args.sample_index;
  options.top = args.top;
  options.format = args.format == "json" ? render::Format::kJson : render::Format::kText;
  profile::Profile profile = profile::ReadProfileFile(args.file);
  InMemorySymbolization symbolization("report", args.symbols);
  symbolization.Symbolize(profile, args.file);
  symbolization.PrintRemaining(std::cerr);
  render::PrintReport(profile, options, std::cout);
  std::cout.flush();
  return kExitOk;
}

}  // namespace

void RegisterReportCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Print the functions holding the most memory in a heap profile (like pprof -top)");
  cmd->add_option("FILE", args->file, "Profile written by heaprec (gzipped or raw pprof)")
      ->required();
  cmd->add_option("--sample-index", args->sample_index,
                  "Value to rank by: inuse_space, inuse_objects, alloc_space or alloc_objects "
                  "(default: the profile's default, normally inuse_space)");
  cmd->add_option("--top", args->top, "Number of functions to show (0 = all)")
      ->capture_default_str();
  cmd->add_option("--format", args->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  AddSymbolSearchOptions(cmd, args->symbols);
  cmd->callback([args, exit_code] {
    *exit_code = RunReportingErrors("report", [&] { return RunReport(*args); });
  });
}

}  // namespace heaprec::cli
