#include "cli/push_options.h"

#include <cstdlib>
#include <iostream>

#include "cli/command_line.h"
#include "cli/option_helpers.h"

namespace heaprec::cli {
namespace {

// "Name: value": an HTTP header field name (RFC 9110 token characters), a colon, no line breaks.
bool IsHeader(const std::string& header) {
  std::size_t colon = header.find(':');
  if (colon == 0 || colon == std::string::npos) return false;
  for (std::size_t i = 0; i < colon; ++i) {
    char c = header[i];
    bool token = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
    if (!token) return false;
  }
  return header.find_first_of("\r\n") == std::string::npos;
}

}  // namespace

void AddPushOptions(CLI::App* command, PushArgs& args, const std::string& what_timeout) {
  command
      ->add_option("--app", args.app,
                   "Pyroscope application name (service_name); letters, digits, _ . - /")
      ->option_text("NAME");
  AddRepeatableOption(command, "--label", args.labels,
                      "Label every pushed profile with NAME=VALUE (repeatable: service, version, "
                      "host, ...)",
                      "NAME=VALUE");
  AddRepeatableOption(command, "--push-header", args.headers,
                      "Send this HTTP header with each push (repeatable), e.g. 'X-Scope-OrgID: "
                      "tenant' or 'Authorization: Bearer TOKEN'",
                      "'NAME: VALUE'");
  command->add_option("--push-timeout", args.timeout_seconds, what_timeout)
      ->option_text("SECONDS")
      ->check(NotNegative())
      ->default_val(10);
}

std::string MakePushConfig(const PushArgs& args, push::PushConfig* config) {
  if (args.url.rfind("http://", 0) != 0 && args.url.rfind("https://", 0) != 0) {
    return "--push '" + args.url + "' is invalid: expected an http:// or https:// URL";
  }
  config->server = args.url;
  if (!args.app.empty()) {
    if (std::string error = push::CheckAppName(args.app); !error.empty()) {
      return "--app '" + args.app + "' is invalid: " + error;
    }
    config->app = args.app;
  }
  for (const std::string& text : args.labels) {
    push::Label label;
    if (std::string error = push::ParseLabel(text, &label); !error.empty()) {
      return "--label '" + text + "' is invalid: " + error;
    }
    config->labels.push_back(label);
  }
  if (std::string error = push::CheckLabels(config->labels); !error.empty()) {
    return "--label: " + error;
  }
  for (const std::string& header : args.headers) {
    if (!IsHeader(header)) {
      return "--push-header '" + header + "' is invalid: expected 'Name: value'";
    }
  }
  config->headers = args.headers;
  if (const char* retry = std::getenv("HEAPREC_PUSH_RETRY_SECONDS"); retry && *retry) {
    char* end = nullptr;
    double seconds = std::strtod(retry, &end);
    if (*end != '\0' || !(seconds > 0 && seconds <= 60)) {
      return std::string("HEAPREC_PUSH_RETRY_SECONDS '") + retry +
             "' is invalid: expected seconds from 0 to 60";
    }
    config->retry_initial_seconds = seconds;
  }
  return "";
}

void PrintNotPushed(const std::string& prefix, const std::vector<std::string>& lines,
                    const push::PushConfig& config) {
  if (lines.empty()) return;
  for (const std::string& line : lines) {
    std::cerr << prefix << ": not pushed: " << line << "; kept on disk\n";
  }
  std::string first = lines.front().substr(0, lines.front().find(" ("));
  std::cerr << prefix << ": push them later with: heaprec agent " << push::SplitPath(first).first
            << " --once --push " << push::RedactedUrl(config.server);
  if (!config.app.empty()) std::cerr << " --app " << config.app;
  for (const push::Label& label : config.labels) {
    std::cerr << " --label " << label.name << "=" << label.value;
  }
  std::cerr << "\n";
}

}  // namespace heaprec::cli
