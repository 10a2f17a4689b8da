// The options that decide how the profile-reading commands (report, diff, leaks, flame and run's
// summary) name frames and choose each sample's allocation site: --skip-frames, --keep-frames,
// --all-frames, --full-names and, where rows are listed, --lines.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "analysis/profile_view.h"

namespace heaprec::cli {

struct FrameArgs {
  std::vector<std::string> skip;  // more patterns of frames that are not the user's code
  std::vector<std::string> keep;  // patterns of frames that always are
  bool all_frames = false;        // leave heaprec's default patterns out
  bool full_names = false;
  bool lines = false;
};

enum class LinesOption { kOffered, kNotOffered };

// Adds the options to `command`, storing into `args` (which must outlive the parse). The patterns
// are checked when parsed: an invalid regular expression is a usage error naming it.
void AddFrameOptions(CLI::App& command, FrameArgs& args, LinesOption lines);

analysis::ViewOptions MakeViewOptions(const FrameArgs& args);

}  // namespace heaprec::cli
