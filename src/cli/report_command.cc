// `heaprec report FILE...|DIR`: prints the functions holding the most memory in a profile (several
// merged into one: cli/profile_inputs.h), like `pprof -top`, as text or JSON; or its stacks as
// folded stacks, for flamegraph.pl, inferno and speedscope; or with --by-process how much each
// merged profile holds.
#include <iostream>
#include <memory>

#include "analysis/process_breakdown.h"
#include "analysis/report.h"
#include "analysis/stack_reports.h"
#include "cli/commands.h"
#include "cli/frame_options.h"
#include "cli/option_helpers.h"
#include "cli/profile_inputs.h"
#include "cli/symbolization.h"
#include "render/folded.h"
#include "render/process_breakdown.h"
#include "render/report.h"

namespace heaprec::cli {
namespace {

struct ReportArgs {
  std::vector<std::string> files;
  std::string sample_index;
  bool by_process = false;
  size_t top = 20;
  std::string format = "text";
  FrameArgs frames;
  SymbolSearchArgs symbols;
};

int RunReport(const ReportArgs& args) {
  ProfileInputs in = LoadProfileInputs(
      args.files, {.command = "report", .sample_index = args.sample_index}, args.symbols);
  const profile::Profile& profile = in.merged;
  const analysis::ViewOptions view = MakeViewOptions(args.frames);
  if (args.by_process) {
    std::vector<analysis::ProcessInput> processes;
    for (const ProfileInput& input : in.inputs) {
      processes.push_back({InputLabel(input), &input.profile});
    }
    render::PrintProcessBreakdown(
        analysis::ComputeProcessBreakdown(processes, args.sample_index),
        {.source = in.source,
         .top = args.top,
         .format = args.format == "json" ? render::Format::kJson : render::Format::kText},
        std::cout);
  } else if (args.format == "folded") {
    render::PrintFolded(analysis::ComputeStackReports(profile, args.sample_index, view), std::cout);
  } else {
    render::ReportOptions options;
    options.source = in.source;
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
  cmd->add_option("FILES", args->files,
                  "Profiles written by heaprec (gzipped or raw pprof), or directories holding "
                  "them; several are merged into one, as pprof merges them")
      ->required();
  AddSampleIndexOption(cmd, args->sample_index,
                       "Value to rank by: inuse_space, inuse_objects, alloc_space or alloc_objects "
                       "(default: the profile's default, normally inuse_space)");
  AddTopOption(cmd, args->top, "Number of functions to show (0 = all)");
  AddFormatOption(cmd, args->format,
                  "Output format: text, json, or folded (one line per stack with its value, for "
                  "flamegraph.pl, inferno and speedscope; --top does not apply)",
                  {"text", "json", "folded"});
  cmd->add_flag("--by-process", args->by_process,
                "How much each profile holds (pid and program, else the file), with its share, "
                "instead of the functions");
  AddFrameOptions(*cmd, args->frames, LinesOption::kOffered);
  cmd->footer(
      "Examples:\n"
      "  heaprec report heaprec.myprogram.1234.pb.gz\n"
      "  heaprec report --top 5 --lines --sample-index alloc_space heaprec.myprogram.1234.pb.gz\n"
      "  heaprec report --format folded heaprec.myprogram.1234.pb.gz | flamegraph.pl > heap.svg\n"
      "  heaprec report --by-process profiles/   (every process's last profile, merged)");
  AddSymbolSearchOptions(cmd, args->symbols);
  cmd->callback([args, exit_code] {
    if (args->by_process && args->format == "folded") {
      std::cerr << "heaprec report: --by-process prints a table: use --format text or json\n";
      *exit_code = kExitUsage;
      return;
    }
    *exit_code = RunReportingErrors("report", [&] { return RunReport(*args); });
  });
}

}  // namespace heaprec::cli
