// `heaprec flame FILE... [-o OUT.html]`: writes an interactive flame graph of a profile (several,
// or a directory's, merged into one: cli/profile_inputs.h) as one HTML file that works offline (d3
// and d3-flame-graph are inlined; no network access).
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "analysis/flame_graph.h"
#include "base/file_io.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/frame_options.h"
#include "cli/option_helpers.h"
#include "cli/profile_files.h"
#include "cli/profile_inputs.h"
#include "cli/symbolization.h"
#include "render/flame_page.h"

namespace heaprec::cli {
namespace {

struct FlameArgs {
  std::vector<std::string> files;
  std::string output;
  std::string sample_index;
  FrameArgs frames;
  SymbolSearchArgs symbols;
};

int RunFlame(const FlameArgs& args) {
  if (!render::HasFlamePage()) {  // built with -DHEAPREC_FLAME_PAGE=OFF (src/render/flame.cmake)
    std::cerr << "heaprec flame: this heaprec was built without the flame page; build heaprec "
                 "with -DHEAPREC_FLAME_PAGE=ON (needs Node.js and npm) to get it\n";
    return kExitFailure;
  }
  std::error_code ec;
  if (args.output.empty() &&
      (args.files.size() > 1 || std::filesystem::is_directory(args.files.front(), ec))) {
    std::cerr << "heaprec flame: several profiles make one page: name it with -o FILE\n";
    return kExitUsage;
  }
  std::string output =
      args.output.empty() ? DerivedFileName(args.files.front(), ".html") : args.output;
  ProfileInputs in = LoadProfileInputs(
      args.files, {.command = "flame", .sample_index = args.sample_index}, args.symbols);
  std::string page = render::RenderFlamePage(
      analysis::BuildFlameGraph(in.merged, args.sample_index, MakeViewOptions(args.frames)),
      {.source = in.source});
  if (output == "-") {
    std::cout << page;
    std::cout.flush();
    if (!std::cout) {
      std::cerr << "heaprec flame: cannot write to standard output\n";
      return kExitFailure;
    }
  } else {
    base::WriteFileAtomically(output, page);
    std::cerr << "heaprec flame: wrote " << output << "\n";
  }
  return kExitOk;
}

}  // namespace

void RegisterFlameCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<FlameArgs>();
  CLI::App* cmd = app.add_subcommand(
      "flame",
      "Write an interactive flame graph of a heap profile as one self-contained HTML file.\n"
      "Click to zoom, search, hover for values with their 95% intervals; it works offline.");
  cmd->add_option("FILES", args->files,
                  "Profiles written by heaprec (gzipped or raw pprof), or directories holding "
                  "them; several are merged into one (then -o is needed)")
      ->required();
  cmd->add_option("-o,--output", args->output,
                  "HTML file to write ('-' for standard output; default: FILE with .pb.gz "
                  "replaced by .html)")
      ->option_text("FILE")
      ->check(InExistingDirectory());
  AddSampleIndexOption(
      cmd, args->sample_index,
      "Value shown first: inuse_space, inuse_objects, alloc_space or alloc_objects "
      "(default: the profile's default, normally inuse_space); the page switches "
      "between all of them");
  cmd->footer(
      "Examples:\n"
      "  heaprec flame heaprec.myprogram.1234.pb.gz     writes heaprec.myprogram.1234.html\n"
      "  heaprec flame -o heap.html --sample-index alloc_space heaprec.myprogram.1234.pb.gz");
  AddFrameOptions(*cmd, args->frames, LinesOption::kNotOffered);
  AddSymbolSearchOptions(cmd, args->symbols);
  cmd->callback([args, exit_code] {
    *exit_code = RunReportingErrors("flame", [&] { return RunFlame(*args); });
  });
}

}  // namespace heaprec::cli
