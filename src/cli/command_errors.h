// The one mapping from what a subcommand's work throws to what the user sees: one line on stderr,
// prefixed with the subcommand ("heaprec report: ..."), and the exit status.
#pragma once

#include <functional>

namespace heaprec::cli {

// Exit statuses shared by the subcommands (the `run` subcommand returns the program's own status).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // the command could not do its work (bad file, I/O error)
inline constexpr int kExitUsage = 2;    // bad command line

// Runs `work` and returns its status; if it throws, prints "heaprec COMMAND: WHAT" and returns
// kExitUsage for a request the input cannot answer (an unknown sample index), kExitFailure for
// anything else (an unreadable, invalid or incomparable profile, an unwritable output).
int RunReportingErrors(const char* command, const std::function<int()>& work);

}  // namespace heaprec::cli
