// `heaprec recover RECORD|DIR... [-o OUT]`: turns the heap record of a process that was killed
// without warning (SIGKILL, the OOM killer) into the profiles it could not write: its heap at
// death and its peak (cli/heap_record_reader.h). `heaprec run` does the same on its own when one
// of its processes dies that way; this is for processes started otherwise.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/heap_record_reader.h"

namespace heaprec::cli {
namespace {

struct RecoverArgs {
  std::vector<std::string> paths;
  std::string output;
  bool keep = false;
};

std::string Mebibytes(std::int64_t bytes) {
  char text[32];
  snprintf(text, sizeof(text), "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return text;
}

// Recovers one record; false (after saying why) when there was nothing to recover.
bool RecoverOne(const std::string& path, const RecoverArgs& args) {
  std::error_code ec;
  if (std::filesystem::file_size(path, ec) == 0 && !ec) {
    // What a process under `heaprec run` leaves when killed while handing its ended record on.
    std::cerr << "heaprec recover: " << path << ": empty; its process had ended\n";
    return false;
  }
  HeapRecord record = ReadHeapRecord(path);
  if (record.ended) {
    std::cerr << "heaprec recover: " << path << ": process " << record.pid
              << " wrote its final profile; the record holds nothing more\n";
    return false;
  }
  if (RecordOwnerIsRunning(record)) {
    std::cerr << "heaprec recover: " << path << ": process " << record.pid
              << " is still running (its profiles: heaprec's dump signal or HTTP endpoint)\n";
    return false;
  }
  RecoveredFiles files = WriteRecoveredProfiles(record, args.output, 0);
  std::cout << "heaprec recover: process " << record.pid << " (" << record.program << "): ";
  if (record.ending_reason.empty()) {
    std::cout << "heap at death ";
  } else {
    std::cout << "heap at its end (" << record.ending_reason
              << "; it could not write its final profile: " << std::strerror(record.write_error)
              << ") ";
  }
  std::cout << Mebibytes(InuseBytes(record.live)) << " in " << files.death;
  if (!files.peak.empty()) std::cout << "; peak in " << files.peak;
  if (record.incomplete) std::cout << " (the record is incomplete: its file could not grow)";
  std::cout << "\n";
  if (!args.keep) unlink(path.c_str());
  return true;
}

int RunRecover(const RecoverArgs& args) {
  std::vector<std::string> records;
  for (const std::string& path : args.paths) {
    std::error_code ec;
    if (!std::filesystem::is_directory(path, ec)) {
      records.push_back(path);
      continue;
    }
    std::vector<std::string> found = FindHeapRecords(path);
    if (found.empty())
      std::cerr << "heaprec recover: no heap records (*.record) in " << path << "\n";
    records.insert(records.end(), found.begin(), found.end());
  }
  if (!args.output.empty() && records.size() != 1) {
    std::cerr << "heaprec recover: -o writes one record's profile, but " << records.size()
              << " records were given\n";
    return kExitUsage;
  }
  int recovered = 0;
  for (const std::string& record : records) {
    if (RecoverOne(record, args)) ++recovered;
  }
  return recovered > 0 ? kExitOk : kExitFailure;
}

}  // namespace

void RegisterRecoverCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<RecoverArgs>();
  CLI::App* cmd = app.add_subcommand(
      "recover",
      "Write the profiles of a process killed without warning (SIGKILL, the OOM killer) from its "
      "heap record.");
  cmd->footer(
      "A profiled process keeps NAME.PID.record beside its profiles. Recovering it writes the\n"
      "heap the process died with, at the name its final profile would have had\n"
      "(reason=killed), and its peak (NAME.PID.peak.pb.gz) when the record's is larger than the\n"
      "one on disk. The record is removed once recovered (--keep keeps it); a record whose\n"
      "process still runs is left alone. heaprec run does this by itself for its processes.\n"
      "\n"
      "Examples:\n"
      "  heaprec recover /var/tmp/heap/heaprec.4242.record\n"
      "  heaprec recover /var/tmp/heap          every record there whose process is gone\n"
      "  heaprec recover --keep -o killed.pb.gz heaprec.4242.record");
  cmd->add_option("records", args->paths, "Heap records, or directories holding them")->required();
  cmd->add_option("-o,--output", args->output, "Where the heap at death goes (one record only)");
  cmd->add_flag("--keep", args->keep, "Keep the record after writing its profiles");
  cmd->callback([args, exit_code] {
    *exit_code = RunReportingErrors("recover", [&] { return RunRecover(*args); });
  });
}

}  // namespace heaprec::cli
