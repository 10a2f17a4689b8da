#include "cli/frame_options.h"

#include <stdexcept>

#include "cli/option_helpers.h"

namespace heaprec::cli {
namespace {

// CLI11 validators return "" for a good value, else the error.
std::string CheckPattern(const std::string& pattern) {
  try {
    analysis::SiteRule::WithoutDefaults().AddSkip(pattern);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

void AddFrameOptions(CLI::App& command, FrameArgs& args, LinesOption lines) {
  const CLI::Validator pattern(CheckPattern, "REGEX", "regular expression");
  // One pattern per --skip-frames: the FILE after it is not a pattern.
  AddRepeatableOption(&command, "--skip-frames", args.skip,
                      "Frames whose function name matches REGEX are not the user's code either: a "
                      "sample is charged to the first frame from the leaf that no pattern skips "
                      "(repeatable; heaprec's defaults: README, \"Allocation sites\")",
                      "REGEX")
      ->check(pattern);
  AddRepeatableOption(&command, "--keep-frames", args.keep,
                      "Frames whose function name matches REGEX are always the user's code, even "
                      "when a skip pattern matches them (repeatable)",
                      "REGEX")
      ->check(pattern);
  command.add_flag("--all-frames", args.all_frames,
                   "Leave heaprec's default skip patterns out: charge each sample to the frames as "
                   "recorded (allocator and library internals included)");
  command.add_flag("--full-names", args.full_names,
                   "Show C++ and Rust functions with their parameters and template arguments");
  if (lines == LinesOption::kOffered) {
    command.add_flag("--lines", args.lines,
                     "One row per source line instead of one per function (like pprof -lines)");
  }
}

analysis::ViewOptions MakeViewOptions(const FrameArgs& args) {
  analysis::ViewOptions options;
  if (args.all_frames) options.sites = analysis::SiteRule::WithoutDefaults();
  for (const std::string& pattern : args.skip) options.sites.AddSkip(pattern);
  for (const std::string& pattern : args.keep) options.sites.AddKeep(pattern);
  options.full_names = args.full_names;
  options.lines = args.lines;
  return options;
}

}  // namespace heaprec::cli
