// `heaprec report FILE`: prints the functions holding the most memory in a profile, like
// `pprof -top`, as text or JSON; or its stacks as folded stacks, for flamegraph.pl, inferno and
// speedscope.
#include <iostream>
#include <memory>

#include "analysis/report.h"
#include "analysis/stack_reports.h"
#include "cli/commands.h"
#include "cli/frame_options.h"
#include "cli/option_helpers.h"
#include "cli/read_for_display.h"
#include "cli/symbolization.h"
#include "render/folded.h"
#include "render/report.h"

namespace heaprec::cli {
namespace {

struct ReportArgs {
  std::string file;
  std::string sample_index;
  size_t top = 20;
  std::string format = "text";
  FrameArgs frames;
  SymbolSearchArgs symbols;
};

int RunReport(const ReportArgs& args) {
  profile::Profile profile = std::move(ReadProfilesForDisplay(
      {args.file}, {.command = "report", .sample_index = args.sample_index}, args.symbols)[0]);
  const analysis::ViewOptions view = MakeViewOptions(args.frames);
  if (args.format == "folded") {
    render::PrintFolded(analysis::ComputeStackReports(profile, args.sample_index, view), std::cout);
  } else {
    render::ReportOptions options;
    options.source = args.file;
    options.top = args.top;
    options.format = args.format == "json" ? render::Format::kJson : render::Format::kText;
    render::PrintReport(
        analysis::ComputeReport(profile, args.sample_index, /*with_stacks=*/false, view), options,
        std::cout);
  }
  std::cout.flush();
  return kExitOk;
}

}  // namespace

void RegisterReportCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Print the functions holding the most memory in a heap profile, like pprof -top.\n"
      "flat is what a function allocated itself, cum also counts the functions it called; ± is "
      "the 95% interval of each sampled estimate.");
  cmd->add_option("FILE", args->file, "Profile written by heaprec (gzipped or raw pprof)")
      ->required();
  AddSampleIndexOption(cmd, args->sample_index,
                       "Value to rank by: inuse_space, inuse_objects, alloc_space or alloc_objects "
                       "(default: the profile's default, normally inuse_space)");
  AddTopOption(cmd, args->top, "Number of functions to show (0 = all)");
  AddFormatOption(cmd, args->format,
                  "Output format: text, json, or folded (one line per stack with its value, for "
                  "flamegraph.pl, inferno and speedscope; --top does not apply)",
                  {"text", "json", "folded"});
  AddFrameOptions(*cmd, args->frames, LinesOption::kOffered);
  cmd->footer(
      "Examples:\n"
      "  heaprec report heaprec.myprogram.1234.pb.gz\n"
      "  heaprec report --top 5 --lines --sample-index alloc_space heaprec.myprogram.1234.pb.gz\n"
      "  heaprec report --format folded heaprec.myprogram.1234.pb.gz | flamegraph.pl > heap.svg");
  AddSymbolSearchOptions(cmd, args->symbols);
  cmd->callback([args, exit_code] {
    *exit_code = RunReportingErrors("report", [&] { return RunReport(*args); });
  });
}

}  // namespace heaprec::cli
