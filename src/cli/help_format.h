// heaprec's help pages. CLI11's own formatter prints the parser's view of each option (type names
// such as UINT or TEXT, validators such as "INT in [1 - 10]" or "{text,json}", a flag's default
// as "--no-symbolize{false}", REQUIRED); this one prints what a person needs: the names, a
// placeholder for the value, the description with its default, and the command's footer (its
// examples). Each subcommand's description is a line or two: the first line is its summary in
// the list of commands.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace heaprec::cli {

class HelpFormatter : public CLI::FormatterBase {
 public:
  std::string make_help(const CLI::App* app, std::string name,
                        CLI::AppFormatMode mode) const override;
};

// Installs HelpFormatter and heaprec's -h/--help wording on the top-level app. Call it before
// adding the subcommands: each copies both when it is created.
void UseHelpFormatter(CLI::App& app);

// The path of a command from the top-level app: "heaprec report".
std::string CommandPath(const CLI::App& command);

// The command's usage line, "heaprec report [OPTIONS] FILE": its path, [OPTIONS] if it has any,
// then its positionals (NAME, [NAME] when optional, NAME... when repeated; an option_text() in
// place of all three).
std::string UsageLine(const CLI::App& command);

// What `heaprec` alone prints: the usage, the commands, where to read more.
std::string ShortUsage(const CLI::App& app);

// An option that takes no value (--quiet, -h).
bool IsFlag(const CLI::Option& option);

// The type CLI11 converts the value to: UINT, INT, FLOAT or TEXT (its type name without the
// validators' descriptions, "UINT:INT in [1 - 10]" -> "UINT").
std::string BaseTypeName(const CLI::Option& option);
bool IsNumber(const CLI::Option& option);

// A value's placeholder: the option's option_text(), else N for a number and VALUE for the rest.
std::string ValuePlaceholder(const CLI::Option& option);

}  // namespace heaprec::cli
