// The heaprec subcommands. Each lives in its own file and registers itself on the top-level CLI11
// app; when it runs, its callback stores the process exit status in *exit_code.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/command_errors.h"

namespace heaprec::cli {

void RegisterRunCommand(CLI::App& app, int* exit_code);
// For `heaprec run`: keeps the program's own command line (after "--", or from the first argument
// that is not a run option) out of CLI11's hands, so it reaches the program exactly as given. Which
// options take a value is read from `app`'s registered `run` command, so call it after
// RegisterRunCommand.
// Returns how many of argv's arguments CLI11 should parse.
int SplitRunCommandLine(const CLI::App& app, int argc, char** argv);
void RegisterReportCommand(CLI::App& app, int* exit_code);
void RegisterSymbolizeCommand(CLI::App& app, int* exit_code);
void RegisterFetchCommand(CLI::App& app, int* exit_code);
void RegisterFlameCommand(CLI::App& app, int* exit_code);
void RegisterDiffCommand(CLI::App& app, int* exit_code);
void RegisterLeaksCommand(CLI::App& app, int* exit_code);
void RegisterAgentCommand(CLI::App& app, int* exit_code);
void RegisterRecoverCommand(CLI::App& app, int* exit_code);
void RegisterSummaryCommand(CLI::App& app, int* exit_code);
void RegisterUiCommand(CLI::App& app, int* exit_code);
// `heaprec attach PID` and `heaprec detach PID`, for processes started dormant.
void RegisterAttachCommands(CLI::App& app, int* exit_code);

}  // namespace heaprec::cli
