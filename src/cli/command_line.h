// heaprec's command line, around CLI11: `heaprec help [COMMAND]`, the short usage when no command
// is given, and every usage error as one line naming the command and, for a mistyped command or
// option, the closest known one:
//
//   heaprec: unknown command "rn"; did you mean "run"? (heaprec --help lists the commands)
//   heaprec report: unknown option --tpo; did you mean --top?
//   heaprec report: --top expects a number, got "x"
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace heaprec::cli {

// Parses `args` (the command line after the program name, without `heaprec run`'s program: see
// SplitRunCommandLine) and runs the command it names, whose callback stores its exit status in
// *command_status. Returns the status to exit with: the command's; 0 after printing help or the
// version; kExitUsage after printing a usage error (one line on stderr) or the short usage.
int RunCommandLine(CLI::App& app, std::vector<std::string> args, const int* command_status);

// The error CLI11 raised while parsing `command`'s arguments, in one line of words, without the
// "heaprec COMMAND: " prefix.
std::string DescribeParseError(const CLI::App& command, const CLI::ParseError& error);

// Validators whose messages read in words ("expects text or json, got "xml""), for options whose
// value must be one of a few words, in a range, or not negative. Unlike CLI11's IsMember, Range
// and NonNegativeNumber, they add nothing to the option's type name.
CLI::Validator OneOf(std::vector<std::string> values);
CLI::Validator InRange(double min, double max);
CLI::Validator NotNegative();

// For an output file's option (-o, --html, --svg): its directory exists, so that a typo stops the
// command at once, before it reads profiles or runs a program for nothing. A directory holding a
// '%' (a path template's pid or time) is not checked.
CLI::Validator InExistingDirectory();

// An output path naming a directory (one that exists, or any path ending in '/') means a file of
// `default_name` in it: `-o /tmp/heap` should put the profiles there, not fail to write a file
// over the directory in every process. Any other path is returned as given.
std::string InDirectoryByDefault(const std::string& path, const std::string& default_name);

// The same as a CLI11 transform, for an output template option (run -o, attach -o).
CLI::Validator IntoDirectoryByDefault(const std::string& default_name);

}  // namespace heaprec::cli
