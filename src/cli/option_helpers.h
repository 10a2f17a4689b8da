// The one way each kind of option shared by heaprec's commands is declared, so that it parses,
// reads in the help and fails the same way in every command.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <string>
#include <vector>

namespace heaprec::cli {

// An option given once per value (--label A --label B), each occurrence taking exactly one value:
// a positional after it stays the command's (agent --label env=x DIR). The help shows it as
// "--NAME VALUE_NAME...". Returns the option, for a check() or a group().
CLI::Option* AddRepeatableOption(CLI::App* command, const std::string& name,
                                 std::vector<std::string>& values, const std::string& description,
                                 const std::string& value_name);

// --sample-index TYPE: the sample type to show ("" = the profile's default).
CLI::Option* AddSampleIndexOption(CLI::App* command, std::string& sample_index,
                                  const std::string& description);

// --top N, with its default (the initial value of `top`) in the help.
CLI::Option* AddTopOption(CLI::App* command, size_t& top, const std::string& description);

// --format FORMAT, one of `formats`, with its default (the initial value of `format`) in the help.
CLI::Option* AddFormatOption(CLI::App* command, std::string& format, const std::string& description,
                             std::vector<std::string> formats);

}  // namespace heaprec::cli
