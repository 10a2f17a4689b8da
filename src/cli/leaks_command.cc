// `heaprec leaks FILES... | DIR`: ranks the allocation sites whose live bytes keep growing across
// a series of profiles (heaprec run --dump-interval), as a table (text or JSON), an SVG chart and
// an HTML page. The statistics are described in analysis/leak_series.h.
#include <iostream>
#include <memory>
#include <stdexcept>

#include "analysis/leak_series.h"
#include "base/file_io.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/frame_options.h"
#include "cli/option_helpers.h"
#include "cli/profile_files.h"
#include "cli/read_for_display.h"
#include "cli/symbolization.h"
#include "render/leaks.h"

namespace heaprec::cli {
namespace {

struct LeaksArgs {
  std::vector<std::string> paths;
  size_t top = 10;
  std::string format = "text";
  std::string by = "function";
  bool single_series = false;
  int64_t pid = -1;
  std::string svg;
  std::string html;
  size_t chart_sites = 5;
  double min_t = 3.0;
  double min_r2 = 0.5;
  FrameArgs frames;
  SymbolSearchArgs symbols;
};

int RunLeaks(const LeaksArgs& args) {
  render::LeakReportOptions options;
  options.top = args.top;
  options.analysis.by =
      args.by == "stack" ? analysis::LeakSiteKind::kStack : analysis::LeakSiteKind::kFunction;
  options.analysis.single_series = args.single_series;
  options.analysis.min_t = args.min_t;
  options.analysis.min_r2 = args.min_r2;
  options.analysis.view = MakeViewOptions(args.frames);
  // AnalyzeLeaks reads inuse_space itself: there is no sample index to check first.
  const std::vector<std::string> files = CollectProfileFiles(args.paths);
  std::vector<profile::Profile> profiles =
      ReadProfilesForDisplay(files, {.command = "leaks", .one_line = true}, args.symbols);
  std::vector<analysis::LeakInput> inputs;
  for (size_t i = 0; i < files.size(); ++i) inputs.push_back({files[i], std::move(profiles[i])});
  std::vector<analysis::LeakSeries> series =
      analysis::AnalyzeLeaks(std::move(inputs), options.analysis);
  if (args.pid >= 0) {
    std::erase_if(series, [&](const analysis::LeakSeries& s) { return s.pid != args.pid; });
    if (series.empty()) {
      std::cerr << "heaprec leaks: no profile of pid " << args.pid << "\n";
      return kExitFailure;
    }
  }
  if (args.format == "json") {
    render::PrintLeaksJson(series, options, std::cout);
  } else {
    render::PrintLeaksText(series, options, std::cout);
  }
  std::cout.flush();
  if (!args.svg.empty() && !series.empty()) {
    // One chart per file: the longest series (ties: the first by pid).
    const analysis::LeakSeries* chosen = &series.front();
    for (const analysis::LeakSeries& s : series) {
      if (s.files.size() > chosen->files.size()) chosen = &s;
    }
    if (series.size() > 1) {
      std::cerr << "heaprec leaks: " << series.size() << " processes; the chart shows "
                << (chosen->pid ? "pid " + std::to_string(*chosen->pid) : "the unnamed one")
                << " (choose with --pid, or chart them all with --html)\n";
    }
    base::WriteFileAtomically(args.svg, render::LeaksSvg(*chosen, args.chart_sites));
  }
  if (!args.html.empty()) {
    base::WriteFileAtomically(args.html, render::LeaksHtml(series, options, args.chart_sites));
  }
  return kExitOk;
}

}  // namespace

void RegisterLeaksCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<LeaksArgs>();
  CLI::App* cmd = app.add_subcommand(
      "leaks",
      "Rank the allocation sites whose live bytes keep growing across a series of profiles.\n"
      "Take the series with heaprec run --dump-interval SECONDS. A suspect grows steadily: the "
      "line fitted to its live bytes rises more than noise (--min-t) and explains its "
      "variation (--min-r2).");
  cmd->add_option("FILES", args->paths,
                  "Profiles of one or more processes, or directories holding them (*.pb.gz)")
      ->required();
  AddTopOption(cmd, args->top, "Sites to show per process (0 = all)");
  AddFormatOption(cmd, args->format, "Output format: text or json", {"text", "json"});
  cmd->add_option("--by", args->by,
                  "What a site is: function, the function that called the allocator, or stack, "
                  "the whole stack")
      ->check(OneOf({"function", "stack"}))
      ->option_text("SITE")
      ->capture_default_str();
  cmd->add_flag("--single-series", args->single_series,
                "Treat all the profiles as one series instead of grouping them by pid");
  cmd->add_option("--pid", args->pid, "Only the profiles of this process")
      ->check(NotNegative())
      ->option_text("PID");
  cmd->add_option("--svg", args->svg, "Write a chart of live bytes over time of the top sites")
      ->option_text("FILE")
      ->check(InExistingDirectory());
  cmd->add_option("--html", args->html, "Write a self-contained HTML page: charts and tables")
      ->option_text("FILE")
      ->check(InExistingDirectory());
  cmd->add_option("--chart-sites", args->chart_sites, "Sites drawn in the charts, 1 to 10")
      ->check(InRange(1, 10))
      ->capture_default_str();
  cmd->add_option("--min-t", args->min_t,
                  "A suspect's slope is at least this many standard errors above zero")
      ->check(NotNegative())
      ->option_text("T")
      ->capture_default_str();
  cmd->add_option("--min-r2", args->min_r2,
                  "A suspect's line explains at least this share of "
                  "its variation (R squared, 0 to 1)")
      ->check(InRange(0.0, 1.0))
      ->option_text("R2")
      ->capture_default_str();
  cmd->footer(
      "Examples:\n"
      "  heaprec run --dump-interval 10 -o /var/tmp/heap/%e.%p.pb.gz -- ./server\n"
      "  heaprec leaks /var/tmp/heap/ --svg leaks.svg --html leaks.html\n"
      "  heaprec leaks --by stack --top 3 /var/tmp/heap/server.*.pb.gz");
  AddFrameOptions(*cmd, args->frames, LinesOption::kOffered);
  AddSymbolSearchOptions(cmd, args->symbols);
  cmd->callback([args, exit_code] {
    *exit_code = RunReportingErrors("leaks", [&] { return RunLeaks(*args); });
  });
}

}  // namespace heaprec::cli
