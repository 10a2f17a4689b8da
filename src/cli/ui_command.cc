// `heaprec ui FILE...|DIR|URL`: one page to explore profiles (render/ui_page.h, docs/design/ui.md):
// the timeline of each process, the top functions with their callers and callees, the flame
// graph, every sample type, a red/green comparison of two profiles or two moments, the leaks of
// a series. Served on 127.0.0.1 until Ctrl-C, or written as one HTML file with -o.
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "base/file_io.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/option_helpers.h"
#include "cli/page_server.h"
#include "cli/profile_files.h"
#include "cli/read_for_display.h"
#include "cli/symbolization.h"
#include "cli/ui_model.h"
#include "profile/pprof_reader.h"
#include "push/transport.h"
#include "render/ui_page.h"

namespace heaprec::cli {
namespace {

constexpr size_t kMaxProfileBytes = 256u << 20;

struct UiArgs {
  std::vector<std::string> inputs;
  std::string output;
  uint16_t port = 0;
  SymbolSearchArgs symbols;
};

bool IsUrl(const std::string& s) {
  return s.rfind("http://", 0) == 0 || s.rfind("https://", 0) == 0;
}

// A profile served over HTTP (a process run with --http): what `heaprec fetch` reads.
profile::Profile Fetch(const std::string& url) {
  push::CurlTransport transport({.connect_seconds = 5, .request_seconds = 60});
  std::string body;
  const push::Response response = transport.Get(url, kMaxProfileBytes, &body);
  if (response.status != 200) {
    throw std::runtime_error(
        "could not fetch " + url + ": " +
        (response.status == 0 ? response.detail : "HTTP " + std::to_string(response.status)));
  }
  return profile::ReadProfile(body, url);
}

int RunUi(const UiArgs& args) {
  if (!render::HasUiPage()) {  // built with -DHEAPREC_FLAME_PAGE=OFF (src/render/flame.cmake)
    std::cerr << "heaprec ui: this heaprec was built without its pages; build heaprec with "
                 "-DHEAPREC_FLAME_PAGE=ON (needs Node.js and npm) to get it\n";
    return kExitFailure;
  }
  std::vector<std::string> paths, urls;
  for (const std::string& input : args.inputs) (IsUrl(input) ? urls : paths).push_back(input);
  std::vector<std::string> names = paths.empty() ? paths : CollectProfileFiles(paths);
  std::vector<profile::Profile> profiles;
  for (const std::string& name : names) profiles.push_back(profile::ReadProfileFile(name));
  for (const std::string& url : urls) {
    profiles.push_back(Fetch(url));
    names.push_back(url);
  }
  PrepareForDisplay(profiles, names, {.command = "ui", .one_line = true}, args.symbols);
  const std::string source =
      args.inputs.size() == 1 ? args.inputs.front() : std::to_string(names.size()) + " profiles";
  const std::string page =
      render::RenderUiPage(BuildUiDocument(std::move(profiles), names, source));
  if (!args.output.empty()) {
    base::WriteFileAtomically(args.output, page);
    std::cerr << "heaprec ui: wrote " << args.output << "\n";
    return kExitOk;
  }
  ServePage(page, args.port, [](const std::string& url) {
    std::cout << "heaprec ui: serving " << url << " (open it in a browser; Ctrl-C to stop)"
              << std::endl;
  });
  return kExitOk;
}

}  // namespace

void RegisterUiCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<UiArgs>();
  CLI::App* cmd = app.add_subcommand(
      "ui",
      "Explore profiles in the browser: the heap over time (click a moment for the heap then), "
      "the top functions with their callers and callees, the flame graph, every sample type, a "
      "red/green comparison with another profile or moment, and the leaks of a series.\n"
      "Served on 127.0.0.1 until Ctrl-C, or written as one HTML file that works offline (-o).");
  cmd->add_option("INPUT", args->inputs,
                  "Profiles, directories of profiles (a --dump-interval series, a run's output), "
                  "or the URL of a process's --http endpoint")
      ->required();
  cmd->add_option("-o,--output", args->output, "Write the page to this HTML file instead")
      ->option_text("FILE")
      ->check(InExistingDirectory());
  cmd->add_option("--port", args->port, "Port to serve on, on 127.0.0.1 (default: any free one)");
  cmd->footer(
      "Examples:\n"
      "  heaprec ui out/                                 every profile of a run, served\n"
      "  heaprec ui -o heap.html series/                 a --dump-interval series as one file\n"
      "  heaprec ui http://127.0.0.1:6060/debug/pprof/heap   a running process (--http 6060)");
  AddSymbolSearchOptions(cmd, args->symbols);
  cmd->callback(
      [args, exit_code] { *exit_code = RunReportingErrors("ui", [&] { return RunUi(*args); }); });
}

}  // namespace heaprec::cli
