// `heaprec flame FILE [-o OUT.html]`: writes an interactive flame graph of a profile as one HTML
// file that works offline (d3 and d3-flame-graph are inlined; no network access).
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/flame_assets.h"
#include "cli/flame_graph.h"
#include "profile/atomic_file.h"
#include "profile/pprof_reader.h"

namespace heaprec::cli {
namespace {

struct FlameArgs {
  std::string file;
  std::string output;
  std::string sample_index;
};

// FILE without its .pb.gz (or .pb, or .gz) suffix, plus .html, in FILE's directory.
std::string DefaultOutput(const std::string& file) {
  std::string base = file;
  for (const char* suffix : {".gz", ".pb"}) {
    std::string s = suffix;
    if (base.size() > s.size() && base.compare(base.size() - s.size(), s.size(), s) == 0) {
      base.resize(base.size() - s.size());
    }
  }
  return base + ".html";
}

int RunFlame(const FlameArgs& args) {
  if (FlamePageTemplate().empty()) {  // built with -DHEAPREC_FLAME_PAGE=OFF (src/cli/flame.cmake)
    std::cerr << "heaprec flame: this heaprec was built without the flame page; build heaprec "
                 "with -DHEAPREC_FLAME_PAGE=ON (needs Node.js and npm) to get it\n";
    return kExitFailure;
  }
  std::string output = args.output.empty() ? DefaultOutput(args.file) : args.output;
  try {
    Profile profile = ReadProfileFile(args.file);
    FlameOptions options;
    options.source = args.file;
    options.sample_index = args.sample_index;
    std::string page = RenderFlamePage(profile, options);
    if (output == "-") {
      std::cout << page;
      std::cout.flush();
      if (!std::cout) {
        std::cerr << "heaprec flame: cannot write to standard output\n";
        return kExitFailure;
      }
    } else {
      internal::WriteFileAtomically(output, page);
      std::cerr << "heaprec flame: wrote " << output << "\n";
    }
  } catch (const UnknownFlameSampleIndexError& e) {
    std::cerr << "heaprec flame: " << e.what() << "\n";
    return kExitUsage;
  } catch (const ProfileError& e) {
    std::cerr << "heaprec flame: " << e.what() << "\n";
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

void RegisterFlameCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<FlameArgs>();
  CLI::App* cmd = app.add_subcommand(
      "flame",
      "Write an interactive flame graph of a heap profile as one self-contained HTML file "
      "(click to zoom, search, hover for values with their 95% intervals)");
  cmd->add_option("FILE", args->file, "Profile written by heaprec (gzipped or raw pprof)")
      ->required();
  cmd->add_option("-o,--output", args->output,
                  "HTML file to write ('-' for standard output; default: FILE with .pb.gz "
                  "replaced by .html)");
  cmd->add_option("--sample-index", args->sample_index,
                  "Value shown first: inuse_space, inuse_objects, alloc_space or alloc_objects "
                  "(default: the profile's default, normally inuse_space); the page switches "
                  "between all of them");
  cmd->callback([args, exit_code] { *exit_code = RunFlame(*args); });
}

}  // namespace heaprec::cli
