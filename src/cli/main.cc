// heaprec: runs programs under the live-heap profiler, symbolizes and reports on their profiles.
#include <iostream>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"heaprec: a sampling live-heap profiler for native and Ruby programs"};
  app.set_version_flag("--version", "heaprec " HEAPREC_VERSION);
  app.require_subcommand(1);
  int exit_code = heaprec::cli::kExitOk;
  heaprec::cli::RegisterRunCommand(app, &exit_code);
  heaprec::cli::RegisterReportCommand(app, &exit_code);
  heaprec::cli::RegisterSymbolizeCommand(app, &exit_code);
  heaprec::cli::RegisterFlameCommand(app, &exit_code);
  heaprec::cli::RegisterDiffCommand(app, &exit_code);
  heaprec::cli::RegisterLeaksCommand(app, &exit_code);
  try {
    app.parse(heaprec::cli::SplitRunCommandLine(argc, argv), argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);                     // --help, --version
    std::cerr << "heaprec: " << e.what() << " (see heaprec --help)\n";  // one line
    return heaprec::cli::kExitUsage;
  }
  return exit_code;
}
