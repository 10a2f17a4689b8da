// `heaprec summary FILE...|DIR`: the story of each process the profiles come from
// (cli/run_stories.h): the heap over time and its peak, what was never freed, what was freed before
// the end, the resident set explained, the temporaries and the sizes. What `heaprec run` prints at
// the end.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/option_helpers.h"
#include "cli/profile_files.h"
#include "cli/read_for_display.h"
#include "cli/run_stories.h"
#include "cli/symbolization.h"

namespace heaprec::cli {
namespace {

struct SummaryArgs {
  std::vector<std::string> paths;
  size_t top = 5;
  size_t processes = 5;
  SymbolSearchArgs symbols;
};

int RunSummaryCommand(const SummaryArgs& args) {
  const std::vector<profile::Profile> profiles = ReadProfilesForDisplay(
      CollectProfileFiles(args.paths), {.command = "summary", .one_line = true}, args.symbols);
  PrintStories(GroupByProcess(profiles), args.processes, args.top, std::cout);
  std::cout.flush();
  return kExitOk;
}

}  // namespace

void RegisterSummaryCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<SummaryArgs>();
  CLI::App* cmd = app.add_subcommand(
      "summary",
      "Summarize a run from its profiles: the peak and when, what was never freed (leaks) and "
      "what was freed before the end (caches), the RSS explained, temporaries, sizes.\n"
      "What heaprec run prints at the end, for any profiles: a process's final and peak profiles "
      "together tell the most.");
  cmd->add_option("FILE", args->paths,
                  "Profiles, or directories of profiles (every *.pb.gz and *.pb in them)")
      ->required();
  AddTopOption(cmd, args->top, "Sites to show per ranking (0 = all)");
  cmd->add_option("--processes", args->processes,
                  "Processes to summarize, the largest peak first (the rest in one line)")
      ->check(CLI::PositiveNumber);
  cmd->footer(
      "Examples:\n"
      "  heaprec summary heaprec.myprogram.1234.pb.gz heaprec.myprogram.1234.peak.pb.gz\n"
      "  heaprec summary out/");
  AddSymbolSearchOptions(cmd, args->symbols);
  cmd->callback([args, exit_code] {
    *exit_code = RunReportingErrors("summary", [&] { return RunSummaryCommand(*args); });
  });
}

}  // namespace heaprec::cli
