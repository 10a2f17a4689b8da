// The options `heaprec run --push` and `heaprec agent` share to send profiles to Pyroscope
// (src/push): --push URL, --app, --label (repeatable), --push-header (repeatable), --push-timeout.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "push/pusher.h"

namespace heaprec::cli {

struct PushArgs {
  std::string url;
  std::string app;
  std::vector<std::string> labels;
  std::vector<std::string> headers;
  double timeout_seconds = 10;
};

// Adds the options; `what_timeout` describes --push-timeout for this command.
void AddPushOptions(CLI::App* command, PushArgs& args, const std::string& what_timeout);

// Checks the options and fills *config (the retry delays: 1 s doubled up to 60 s, or
// HEAPREC_PUSH_RETRY_SECONDS's first delay, which the tests shorten). Returns "" or what is
// wrong, in one line, for a usage error.
std::string MakePushConfig(const PushArgs& args, push::PushConfig* config);

// The one line a command prints for each profile it could not push, and the hint after them.
// The hint names the agent command with the same URL (its user:password@ hidden), --app and labels.
void PrintNotPushed(const std::string& prefix, const std::vector<std::string>& lines,
                    const push::PushConfig& config);

}  // namespace heaprec::cli
