// CLI11 raises its errors as exceptions whose only payload is an English message ("Could not
// convert: --top = x"), so the translation below reads those messages; the CLI tests
// (tests/cli/command_line_test.cc) pin the result for each, so that a CLI11 whose wording changed
// fails there rather than in front of a user. Unknown options are found from the command's own
// state instead: CLI11 keeps what it could not place in remaining().
#include "cli/command_line.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>

#include "cli/command_errors.h"
#include "cli/help_format.h"
#include "cli/suggest.h"

namespace heaprec::cli {
namespace {

constexpr char kHelpCommand[] = "help";

std::string Quoted(const std::string& s) { return "\"" + s + "\""; }

// "a, b and c" (`last` = " and ").
std::string ListInWords(const std::vector<std::string>& items, const char* last) {
  std::string text;
  for (size_t i = 0; i < items.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == items.size() ? last : ", ") + items[i];
  }
  return text;
}

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// "--tpo=5" -> "--tpo".
std::string OptionName(const std::string& arg) { return arg.substr(0, arg.find('=')); }

// An argument that is meant as an option: "-x", "--name", not "-", "--" or a negative number.
bool LooksLikeOption(const std::string& arg) {
  if (arg.size() < 2 || arg[0] != '-' || arg == "--") return false;
  return !(std::isdigit(static_cast<unsigned char>(arg[1])) || arg[1] == '.');
}

// Every spelling of every option of `app`: "-o", "--output", ...
std::vector<std::string> OptionNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
    for (const std::string& name : option->get_snames()) names.push_back("-" + name);
  }
  return names;
}

std::vector<CLI::App*> Commands(CLI::App& app) {
  return app.get_subcommands([](CLI::App*) { return true; });
}

CLI::App* FindCommand(CLI::App& app, const std::string& name) {
  for (CLI::App* command : Commands(app)) {
    if (command->get_name() == name) return command;
  }
  return nullptr;
}

std::vector<std::string> CommandNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* command : app.get_subcommands({})) names.push_back(command->get_name());
  names.push_back(kHelpCommand);
  return names;
}

std::string UnknownOption(const CLI::App& app, const std::string& arg, const std::string& hint) {
  std::string name = OptionName(arg);
  std::string text = "unknown option " + name;
  if (std::optional<std::string> match = ClosestMatch(name, OptionNames(app))) {
    return text + "; did you mean " + *match + "?";
  }
  return text + " (" + hint + ")";
}

std::string UsageHint(const CLI::App& command) { return "usage: " + UsageLine(command); }

// The CLI11 message's "NAME: rest" split, if it has that form and NAME is one of `command`'s.
const CLI::Option* OptionOfMessage(const CLI::App& command, const std::string& message,
                                   std::string* rest) {
  size_t colon = message.find(": ");
  if (colon == std::string::npos) return nullptr;
  const CLI::Option* option = command.get_option_no_throw(message.substr(0, colon));
  if (option != nullptr) *rest = message.substr(colon + 2);
  return option;
}

bool ParsesAsNumber(const std::string& value) {
  char* end = nullptr;
  std::strtod(value.c_str(), &end);
  return !value.empty() && end == value.c_str() + value.size();
}

// "Could not convert: --top = x".
std::string DescribeConversion(const CLI::App& command, const std::string& message) {
  const std::string prefix = "Could not convert: ";
  size_t equals = message.find(" = ");
  if (!StartsWith(message, prefix) || equals == std::string::npos) return message;
  std::string name = message.substr(prefix.size(), equals - prefix.size());
  std::string value = message.substr(equals + 3);
  const CLI::Option* option = command.get_option_no_throw(name);
  if (option == nullptr) return message;
  if (IsFlag(*option)) return name + " takes no value, got " + Quoted(value);
  std::string expected = "a valid value";
  if (IsNumber(*option)) {
    expected = "a number";
    // A number of the wrong kind (a fraction, or negative for an unsigned): say which kind.
    if (ParsesAsNumber(value)) {
      expected = BaseTypeName(*option) == "UINT" ? "a whole number, 0 or more" : "a whole number";
    }
  }
  return name + " expects " + expected + ", got " + Quoted(value);
}

// An option before the command: one of heaprec's own misspelt, or a command's put first.
std::string UnknownTopLevelOption(CLI::App& app, const std::string& name) {
  const std::string program = app.get_name();
  std::vector<std::string> owners;
  if (!ClosestMatch(name, OptionNames(app))) {
    for (CLI::App* command : Commands(app)) {
      if (command->get_option_no_throw(name) != nullptr) owners.push_back(command->get_name());
    }
  }
  if (owners.empty()) return UnknownOption(app, name, program + " --help lists the commands");
  return name + " goes after the command (it is an option of " + ListInWords(owners, " and ") +
         ": " + program + " " + owners[0] + " " + name + " ...)";
}

}  // namespace

std::string DescribeParseError(const CLI::App& command, const CLI::ParseError& error) {
  // An option CLI11 did not know comes first: whatever else went wrong, it is the likely cause.
  for (const std::string& arg : command.remaining()) {
    if (LooksLikeOption(arg)) {
      return UnknownOption(command, arg, CommandPath(command) + " --help lists the options");
    }
  }
  std::string message = error.what();
  std::string rest;
  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr && !command.remaining().empty()) {
    return "unexpected argument " + Quoted(command.remaining().front()) + " (" +
           UsageHint(command) + ")";
  }
  if (dynamic_cast<const CLI::RequiredError*>(&error) != nullptr) {
    const std::string suffix = " is required";
    if (message.size() > suffix.size() &&
        message.compare(message.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return "missing " + message.substr(0, message.size() - suffix.size()) + " (" +
             UsageHint(command) + ")";
    }
  }
  if (dynamic_cast<const CLI::ConversionError*>(&error) != nullptr) {
    return DescribeConversion(command, message);
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) != nullptr) {
    // "--top: 1 required UINT missing": the option ended the command line without its value. Each
    // occurrence of an option takes one value, a repeatable one's too (option_helpers.h).
    if (const CLI::Option* option = OptionOfMessage(command, message, &rest)) {
      return option->get_name() + " expects a value (" + option->get_name() + " " +
             ValuePlaceholder(*option) + ")";
    }
  }
  if (dynamic_cast<const CLI::ValidationError*>(&error) != nullptr) {
    // "--format: expects text or json, got "xml"" from the validators below reads as one phrase.
    if (const CLI::Option* option = OptionOfMessage(command, message, &rest);
        option != nullptr && StartsWith(rest, "expects ")) {
      return option->get_name() + " " + rest;
    }
  }
  // Anything else keeps CLI11's words, on one line.
  for (char& c : message) {
    if (c == '\n') c = ' ';
  }
  return message;
}

int RunCommandLine(CLI::App& app, std::vector<std::string> args, const int* command_status) {
  const std::string program = app.get_name();
  auto usage_error = [&](const std::string& line) {
    std::cerr << line << "\n";
    return kExitUsage;
  };
  if (args.empty()) {
    std::cerr << ShortUsage(app);
    return kExitUsage;
  }
  // `heaprec help [COMMAND]` is `heaprec [COMMAND] --help`.
  if (args[0] == kHelpCommand) {
    if (args.size() > 2) {
      return usage_error(program + " help: one command at a time (" + program + " help COMMAND)");
    }
    if (args.size() == 1 || args[1] == kHelpCommand) {
      args = {"--help"};
    } else {
      args = {args[1], "--help"};
    }
  }
  const std::string first = args[0];  // a copy: parsing consumes args
  if (LooksLikeOption(first)) {
    if (app.get_option_no_throw(OptionName(first)) == nullptr) {
      return usage_error(program + ": " + UnknownTopLevelOption(app, OptionName(first)));
    }
  } else if (FindCommand(app, first) == nullptr) {
    std::string line = program + ": unknown command " + Quoted(first);
    if (std::optional<std::string> match = ClosestMatch(first, CommandNames(app))) {
      line += "; did you mean " + Quoted(*match) + "?";
    }
    return usage_error(line + " (" + program + " --help lists the commands)");
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last first
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    CLI::App* command = LooksLikeOption(first) ? &app : FindCommand(app, first);
    return usage_error(CommandPath(*command) + ": " + DescribeParseError(*command, e));
  }
  return *command_status;
}

CLI::Validator OneOf(std::vector<std::string> values) {
  std::string expected = ListInWords(values, " or ");
  return CLI::Validator(
      [values, expected](std::string& value) -> std::string {
        if (std::find(values.begin(), values.end(), value) != values.end()) return {};
        return "expects " + expected + ", got " + Quoted(value);
      },
      "");
}

CLI::Validator InRange(double min, double max) {
  auto text = [](double x) {
    std::ostringstream out;
    out << x;
    return out.str();
  };
  std::string expected = "a number from " + text(min) + " to " + text(max);
  return CLI::Validator(
      [min, max, expected](std::string& value) -> std::string {
        double x = std::strtod(value.c_str(), nullptr);
        if (ParsesAsNumber(value) && x >= min && x <= max) return {};
        return "expects " + expected + ", got " + Quoted(value);
      },
      "");
}

CLI::Validator InExistingDirectory() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        // An empty value is the command's own error to name (run: "expected a non-empty path").
        std::error_code ec;
        if (value.empty()) return {};
        std::filesystem::path directory = std::filesystem::absolute(value, ec).parent_path();
        if (ec || directory.string().find('%') != std::string::npos) return {};
        if (std::filesystem::is_directory(directory, ec)) return {};
        if (std::filesystem::exists(directory, ec)) {
          return "expects a file in a directory, but " + Quoted(directory.string()) +
                 " is not a directory";
        }
        return "expects a file in an existing directory: " + Quoted(directory.string()) +
               " does not exist";
      },
      "");
}

std::string InDirectoryByDefault(const std::string& path, const std::string& default_name) {
  std::error_code ec;
  if (path.empty() || (path.back() != '/' && !std::filesystem::is_directory(path, ec))) return path;
  std::string directory = path;
  while (directory.size() > 1 && directory.back() == '/') directory.pop_back();
  return directory == "/" ? "/" + default_name : directory + "/" + default_name;
}

CLI::Validator IntoDirectoryByDefault(const std::string& default_name) {
  return CLI::Validator(
      [default_name](std::string& value) -> std::string {
        value = InDirectoryByDefault(value, default_name);
        return {};
      },
      "");
}

CLI::Validator NotNegative() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        if (ParsesAsNumber(value) && std::strtod(value.c_str(), nullptr) >= 0) return {};
        return "expects a number, 0 or more, got " + Quoted(value);
      },
      "");
}

}  // namespace heaprec::cli
