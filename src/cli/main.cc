// heaprec: runs programs under the live-heap profiler, symbolizes and reports on their profiles.
#include <algorithm>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/help_format.h"

int main(int argc, char** argv) {
  CLI::App app{"heaprec: a sampling live-heap profiler for native and Ruby programs.", "heaprec"};
  heaprec::cli::UseHelpFormatter(app);  // before the subcommands, which inherit it
  app.set_version_flag("-V,--version", "heaprec " HEAPREC_VERSION,
                       "Print heaprec's version and exit");
  app.footer(
      "Examples:\n"
      "  heaprec run -- ./myprogram ARGS       profile a program; prints its top allocation sites\n"
      "  heaprec report heaprec.myprogram.1234.pb.gz\n"
      "  heaprec flame heaprec.myprogram.1234.pb.gz\n"
      "  heaprec help run                      the options of one command, with examples");
  int exit_code = heaprec::cli::kExitOk;
  heaprec::cli::RegisterRunCommand(app, &exit_code);
  heaprec::cli::RegisterReportCommand(app, &exit_code);
  heaprec::cli::RegisterSummaryCommand(app, &exit_code);
  heaprec::cli::RegisterSymbolizeCommand(app, &exit_code);
  heaprec::cli::RegisterFetchCommand(app, &exit_code);
  heaprec::cli::RegisterFlameCommand(app, &exit_code);
  heaprec::cli::RegisterUiCommand(app, &exit_code);
  heaprec::cli::RegisterDiffCommand(app, &exit_code);
  heaprec::cli::RegisterLeaksCommand(app, &exit_code);
  heaprec::cli::RegisterAgentCommand(app, &exit_code);
  heaprec::cli::RegisterRecoverCommand(app, &exit_code);
  heaprec::cli::RegisterAttachCommands(app, &exit_code);
  int parsed = std::max(1, heaprec::cli::SplitRunCommandLine(app, argc, argv));  // argv[0] is ours
  std::vector<std::string> args(argv + 1, argv + parsed);
  return heaprec::cli::RunCommandLine(app, std::move(args), &exit_code);
}
