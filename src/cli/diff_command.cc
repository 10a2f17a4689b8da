// `heaprec diff BASE NEW`: the functions and stacks whose memory grew or shrank the most between
// two profiles, with the changes larger than sampling noise marked, as text or JSON; `-o` also
// writes the difference as a pprof file (`pprof -top DIFF.pb.gz` shows it, as `-diff_base` would).
#include <iostream>
#include <memory>
#include <vector>

#include "analysis/diff.h"
#include "cli/commands.h"
#include "cli/frame_options.h"
#include "cli/option_helpers.h"
#include "cli/profile_inputs.h"
#include "cli/symbolization.h"
#include "render/diff.h"
#include "render/output_file.h"

namespace heaprec::cli {
namespace {

// "a.pb.gz,b.pb.gz" -> {"a.pb.gz", "b.pb.gz"}: the profiles of one side, merged.
std::vector<std::string> SplitSide(const std::string& side) {
  std::vector<std::string> paths;
  size_t start = 0;
  for (size_t comma; (comma = side.find(',', start)) != std::string::npos; start = comma + 1) {
    if (comma > start) paths.push_back(side.substr(start, comma - start));
  }
  if (start < side.size()) paths.push_back(side.substr(start));
  return paths;
}

struct DiffArgs {
  std::string base;  // each side: one profile, or several (or directories) joined with commas
  std::string next;
  std::string sample_index;
  size_t top = 10;
  std::string format = "text";
  std::string output;
  FrameArgs frames;
  SymbolSearchArgs symbols;
};

int RunDiff(const DiffArgs& args) {
  std::vector<ProfileInputs> sides = LoadProfileInputSides(
      {SplitSide(args.base), SplitSide(args.next)},
      {.command = "diff", .sample_index = args.sample_index, .compared = true}, args.symbols);
  const ProfileInputs& base_in = sides[0];
  const ProfileInputs& next_in = sides[1];
  const profile::Profile& base = base_in.merged;
  const profile::Profile& next = next_in.merged;
  // Everything that can be wrong with the inputs is found before any output is written.
  const analysis::Diff diff =
      analysis::ComputeDiff(base, next, args.sample_index, MakeViewOptions(args.frames));
  if (!args.output.empty()) {
    render::WriteProfileFile(analysis::MakeDiffProfile(base, next), args.output);
  }
  render::DiffOptions options;
  options.base_source = base_in.source;
  options.next_source = next_in.source;
  options.top = args.top;
  options.format = args.format == "json" ? render::Format::kJson : render::Format::kText;
  render::PrintDiff(diff, options, std::cout);
  std::cout.flush();
  if (!args.output.empty()) std::cerr << "heaprec diff: wrote " << args.output << "\n";
  return kExitOk;
}

}  // namespace

void RegisterDiffCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<DiffArgs>();
  CLI::App* cmd = app.add_subcommand(
      "diff",
      "Show what grew and what shrank from BASE to NEW, per function and per stack.\n"
      "Changes larger than sampling noise are marked with *.");
  cmd->add_option("BASE", args->base,
                  "The earlier profile; several, or a directory, joined with commas, are merged")
      ->required();
  cmd->add_option("NEW", args->next, "The later profile (same sample types as BASE); likewise")
      ->required();
  AddSampleIndexOption(cmd, args->sample_index,
                       "Value to compare: inuse_space, inuse_objects, alloc_space or alloc_objects "
                       "(default: NEW's default, normally inuse_space)");
  AddTopOption(cmd, args->top, "Entries per ranking (0 = all)");
  AddFormatOption(cmd, args->format, "Output format: text or json", {"text", "json"});
  cmd->add_option("-o,--output", args->output,
                  "Also write NEW - BASE as a pprof profile (BASE's samples negated and labelled "
                  "pprof::base=true, as pprof -diff_base builds it)")
      ->option_text("FILE");
  cmd->footer(
      "Examples:\n"
      "  heaprec diff before.pb.gz after.pb.gz\n"
      "  heaprec diff before/ after/             (each directory's processes merged)\n"
      "  heaprec diff a.1.pb.gz,b.1.pb.gz a.2.pb.gz,b.2.pb.gz\n"
      "  heaprec diff --top 5 --sample-index inuse_objects before.pb.gz after.pb.gz\n"
      "  heaprec diff -o growth.pb.gz before.pb.gz after.pb.gz && pprof -top growth.pb.gz");
  AddFrameOptions(*cmd, args->frames, LinesOption::kOffered);
  AddSymbolSearchOptions(cmd, args->symbols);
  cmd->callback([args, exit_code] {
    *exit_code = RunReportingErrors("diff", [&] { return RunDiff(*args); });
  });
}

}  // namespace heaprec::cli
