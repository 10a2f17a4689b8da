#include "cli/option_helpers.h"

#include <utility>

#include "cli/command_line.h"

namespace heaprec::cli {

CLI::Option* AddRepeatableOption(CLI::App* command, const std::string& name,
                                 std::vector<std::string>& values, const std::string& description,
                                 const std::string& value_name) {
  // A vector option takes every following argument that is not an option unless extra arguments
  // are refused: then CLI11 takes one value per occurrence and appends each to `values`.
  return command->add_option(name, values, description)
      ->option_text(value_name)
      ->allow_extra_args(false);
}

CLI::Option* AddSampleIndexOption(CLI::App* command, std::string& sample_index,
                                  const std::string& description) {
  return command->add_option("--sample-index", sample_index, description)->option_text("TYPE");
}

CLI::Option* AddTopOption(CLI::App* command, size_t& top, const std::string& description) {
  return command->add_option("--top", top, description)->capture_default_str();
}

CLI::Option* AddFormatOption(CLI::App* command, std::string& format, const std::string& description,
                             std::vector<std::string> formats) {
  return command->add_option("--format", format, description)
      ->check(OneOf(std::move(formats)))
      ->option_text("FORMAT")
      ->capture_default_str();
}

}  // namespace heaprec::cli
