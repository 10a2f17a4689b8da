#include "cli/help_format.h"

#include <algorithm>
#include <sstream>
#include <utility>
#include <vector>

namespace heaprec::cli {
namespace {

constexpr size_t kPageWidth = 100;
// Labels ("-o, --output FILE") longer than this put their description on the next line.
constexpr size_t kMaxLabelWidth = 26;

using Row = std::pair<std::string, std::string>;  // label, description

bool IsRepeated(const CLI::Option& option) { return option.get_items_expected_max() > 1; }

// Appends `text` to `out`, wrapped at kPageWidth, every line after the first indented by
// `indent`; `column` is where the text starts on the current line. The text's own line breaks
// are kept.
void AppendWrapped(std::string& out, const std::string& text, size_t column, size_t indent) {
  std::istringstream lines(text);
  std::string line;
  bool first_line = true;
  while (std::getline(lines, line)) {
    if (!first_line) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
    }
    first_line = false;
    std::istringstream words(line);
    std::string word;
    bool line_start = true;
    while (words >> word) {
      if (!line_start && column + 1 + word.size() > kPageWidth) {
        out += "\n" + std::string(indent, ' ');
        column = indent;
        line_start = true;
      }
      if (!line_start) {
        out += ' ';
        ++column;
      }
      out += word;
      column += word.size();
      line_start = false;
    }
  }
}

// "Title:\n" and the rows, descriptions aligned in one column.
std::string Section(const std::string& title, const std::vector<Row>& rows) {
  if (rows.empty()) return {};
  size_t width = 0;
  for (const Row& row : rows) {
    if (row.first.size() <= kMaxLabelWidth) width = std::max(width, row.first.size());
  }
  size_t column = 2 + width + 2;
  std::string out = title + ":\n";
  for (const auto& [label, description] : rows) {
    out += "  " + label;
    if (label.size() > width) {
      out += "\n" + std::string(column, ' ');
    } else {
      out += std::string(column - 2 - label.size(), ' ');
    }
    AppendWrapped(out, description, column, column);
    out += "\n";
  }
  return out + "\n";
}

std::string OptionLabel(const CLI::Option& option) {
  std::string label;
  for (const std::string& name : option.get_snames()) label += (label.empty() ? "-" : ", -") + name;
  for (const std::string& name : option.get_lnames()) {
    label += (label.empty() ? "--" : ", --") + name;
  }
  if (!IsFlag(option)) label += " " + ValuePlaceholder(option) + (IsRepeated(option) ? "..." : "");
  return label;
}

std::string OptionDescription(const CLI::Option& option) {
  std::string description = option.get_description();
  const std::string& default_value = option.get_default_str();
  // A flag's default is its off state; a description that states the default says it better.
  if (!IsFlag(option) && !default_value.empty() &&
      description.find("default") == std::string::npos) {
    // "Sites to show (0 = all; default: 10)" rather than two parentheses in a row.
    if (!description.empty() && description.back() == ')') {
      description.back() = ';';
      description += " default: " + default_value + ")";
    } else {
      description += " (default: " + default_value + ")";
    }
  }
  return description;
}

std::string PositionalLabel(const CLI::Option& option) {
  if (!option.get_option_text().empty()) return option.get_option_text();
  return option.get_name(true, false) + (IsRepeated(option) ? "..." : "");
}

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

// The usage line, the description, the sections, the footer.
std::string Page(const CLI::App& app, const std::string& sections) {
  std::string out = "Usage: " + UsageLine(app) + "\n\n";
  AppendWrapped(out, app.get_description(), 0, 0);
  out += "\n\n" + sections;
  if (!app.get_footer().empty()) out += app.get_footer() + "\n";
  return out;
}

std::string CommandHelp(const CLI::App& app) {
  std::vector<Row> positionals, options;
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_positional()) {
      positionals.emplace_back(PositionalLabel(*option), option->get_description());
    } else {
      options.emplace_back(OptionLabel(*option), OptionDescription(*option));
    }
  }
  return Page(app, Section("Arguments", positionals) + Section("Options", options));
}

std::string TopLevelHelp(const CLI::App& app) {
  std::vector<Row> commands, options;
  for (const CLI::App* command : app.get_subcommands({})) {
    commands.emplace_back(command->get_name(), FirstLine(command->get_description()));
  }
  for (const CLI::Option* option : app.get_options()) {
    options.emplace_back(OptionLabel(*option), OptionDescription(*option));
  }
  return Page(app, Section("Commands", commands) + Section("Options", options));
}

}  // namespace

bool IsFlag(const CLI::Option& option) { return option.get_expected_max() == 0; }

std::string CommandPath(const CLI::App& command) {
  std::string path = command.get_name();
  for (const CLI::App* parent = command.get_parent(); parent != nullptr;
       parent = parent->get_parent()) {
    path = parent->get_name() + " " + path;
  }
  return path;
}

std::string HelpFormatter::make_help(const CLI::App* app, std::string /*name*/,
                                     CLI::AppFormatMode /*mode*/) const {
  // One page per command, whatever the mode: heaprec has no --help-all.
  return app->get_parent() == nullptr ? TopLevelHelp(*app) : CommandHelp(*app);
}

void UseHelpFormatter(CLI::App& app) {
  app.formatter(std::make_shared<HelpFormatter>());
  app.set_help_flag("-h,--help", "Print this help and exit");
}

std::string UsageLine(const CLI::App& command) {
  std::string line = CommandPath(command);
  if (command.get_parent() == nullptr) return line + " COMMAND [OPTIONS] [ARGS...]";
  std::vector<const CLI::Option*> positionals =
      command.get_options([](const CLI::Option* o) { return o->get_positional(); });
  if (command.get_options().size() > positionals.size()) line += " [OPTIONS]";
  for (const CLI::Option* option : positionals) {
    std::string token = PositionalLabel(*option);
    if (option->get_option_text().empty() && !option->get_required()) token = "[" + token + "]";
    line += " " + token;
  }
  return line;
}

std::string ShortUsage(const CLI::App& app) {
  std::string commands;
  for (const CLI::App* command : app.get_subcommands({})) {
    commands += (commands.empty() ? "" : ", ") + command->get_name();
  }
  const std::string name = app.get_name();
  std::string out = "Usage: " + UsageLine(app) + "\n";
  out += "Commands: " + commands + "\n";
  out += name + " --help describes them; " + name +
         " help COMMAND shows a command's options and examples.\n";
  return out;
}

std::string BaseTypeName(const CLI::Option& option) {
  std::string type = option.get_type_name();
  return type.substr(0, type.find_first_of(": "));
}

bool IsNumber(const CLI::Option& option) {
  std::string type = BaseTypeName(option);
  return type == "UINT" || type == "INT" || type == "FLOAT";
}

std::string ValuePlaceholder(const CLI::Option& option) {
  if (!option.get_option_text().empty()) return option.get_option_text();
  return IsNumber(option) ? "N" : "VALUE";
}

}  // namespace heaprec::cli
