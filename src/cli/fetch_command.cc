// `heaprec fetch URL -o FILE`: fetches a heap profile from a process's HTTP endpoint
// (`heaprec run --http`, or any /debug/pprof/heap) and symbolizes it fully on this side, with
// the search `heaprec symbolize` uses (binaries, debug files, debuginfod): files, lines and
// inlined functions, where the endpoint serves only the symbol tables' function names
// (docs/design/http-endpoint.md). Where nothing here names a location, the served name stays.
#include <iostream>
#include <memory>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/symbolization.h"
#include "profile/pprof_reader.h"
#include "profile/profile_error.h"
#include "push/transport.h"
#include "render/output_file.h"
#include "symbolize/symbolizer.h"

namespace heaprec::cli {
namespace {

// A profile is compressed protobuf: far more than any heap profile needs, still bounded.
constexpr std::size_t kMaxProfileBytes = 256u << 20;

struct FetchArgs {
  std::string url;
  std::string output;
  double timeout_seconds = 60;
  SymbolSearchArgs search;
};

int RunFetch(const FetchArgs& args) {
  push::CurlTransport transport({.connect_seconds = 5, .request_seconds = args.timeout_seconds});
  std::string body;
  push::Response response = transport.Get(args.url, kMaxProfileBytes, &body);
  if (response.status == 0) {
    std::cerr << "heaprec fetch: could not fetch " << args.url << ": " << response.detail << "\n";
    return kExitFailure;
  }
  if (response.status != 200) {
    std::cerr << "heaprec fetch: " << args.url << " answered HTTP " << response.status
              << (response.detail.empty() ? "" : ": " + response.detail) << "\n";
    return kExitFailure;
  }
  profile::Profile profile;
  try {
    profile = profile::ReadProfile(body, args.url);
  } catch (const profile::ProfileError& error) {
    std::cerr << "heaprec fetch: " << args.url << " did not answer with a pprof profile ("
              << error.what() << ")\n";
    return kExitFailure;
  }
  symbolize::Symbolizer symbolizer(MakeSymbolizeOptions(args.search));
  symbolizer.Symbolize(profile);
  PrintBinaryNotes("heaprec fetch", symbolizer, std::cerr);
  PrintCachedBinaries("heaprec fetch", symbolizer, std::cerr);
  render::WriteProfileFile(profile, args.output);
  return kExitOk;
}

}  // namespace

void RegisterFetchCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<FetchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "fetch",
      "Fetch a heap profile over HTTP (GET /debug/pprof/heap of heaprec run --http) and symbolize "
      "it here, with files, lines and inlined functions, into FILE.");
  cmd->add_option("URL", args->url,
                  "The profile's URL, as http://127.0.0.1:6060/debug/pprof/heap (https too)")
      ->required();
  cmd->add_option("-o,--output", args->output, "Write the symbolized profile here (.pb.gz)")
      ->option_text("FILE")
      ->required();
  cmd->add_option("--timeout", args->timeout_seconds,
                  "Seconds to wait for the whole answer (default: 60)")
      ->option_text("SECONDS")
      ->check(InRange(0.1, 86400));
  AddSymbolSearchOptions(cmd, args->search);
  cmd->footer(
      "The endpoint serves function names from the symbol tables only; the binaries and debug\n"
      "files are looked for here as heaprec symbolize looks for them (heaprec help symbolize).\n"
      "Exit status: 0 when the profile was written; 1 when it could not be fetched (no answer, an\n"
      "answer other than 200, an answer that is not a profile) or written; 2 for a bad command\n"
      "line.\n"
      "Examples:\n"
      "  heaprec fetch http://127.0.0.1:6060/debug/pprof/heap -o heap.pb.gz\n"
      "  heaprec fetch --binary-path /srv/app/unstripped http://10.0.0.5:6060/debug/pprof/heap "
      "-o heap.pb.gz\n"
      "  heaprec fetch http://127.0.0.1:6060/debug/pprof/heap -o heap.pb.gz && heaprec report "
      "--lines heap.pb.gz");
  cmd->callback([args, exit_code] {
    *exit_code = RunReportingErrors("fetch", [&] { return RunFetch(*args); });
  });
}

}  // namespace heaprec::cli
