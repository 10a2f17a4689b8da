#include "cli/run_recovery.h"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <iostream>
#include <set>
#include <string>

#include "cli/heap_record_reader.h"
#include "schema/heap_record_format.h"
#include "schema/profile_schema.h"

namespace heaprec::cli {

void RecoverKilledProcesses(Manifest& written, pid_t root, int root_signal) {
  for (const ManifestEntry& entry : written.records) {
    std::error_code ec;
    // A process that wrote its final profile removed its record (or parked it: RemoveRecordSpares);
    // so did one that exec'd. One killed while parking it left it empty: nothing to recover.
    if (!std::filesystem::exists(entry.path, ec)) continue;
    if (std::filesystem::file_size(entry.path, ec) == 0 && !ec) {
      unlink(entry.path.c_str());
      continue;
    }
    try {
      HeapRecord record = ReadHeapRecord(entry.path);
      if (record.ended) {
        unlink(entry.path.c_str());
        continue;
      }
      if (RecordOwnerIsRunning(record)) {  // a daemon that outlived the program
        written.running.push_back(entry);
        continue;
      }
      RecoveredFiles files =
          WriteRecoveredProfiles(record, "", entry.pid == root ? root_signal : 0);
      written.profiles.push_back({entry.pid, files.reason, files.death});
      if (!record.ending_reason.empty()) {
        std::cerr << "heaprec: process " << entry.pid << " could not write its final profile ("
                  << std::strerror(record.write_error) << "); written from its heap record to "
                  << files.death << "\n";
      }
      if (!files.peak.empty()) {
        bool listed = false;
        for (const ManifestEntry& e : written.profiles) {
          if (e.path == files.peak) listed = true;
        }
        if (!listed) written.profiles.push_back({entry.pid, schema::kReasonPeak, files.peak});
      }
      unlink(entry.path.c_str());
    } catch (const std::exception& error) {
      std::cerr << "heaprec: the heap record of process " << entry.pid
                << " could not be recovered: " << error.what() << "\n";
    }
  }
}

void RemoveRecordSpares(const Manifest& written) {
  std::set<std::filesystem::path> directories;
  for (const ManifestEntry& entry : written.records) {
    directories.insert(std::filesystem::path(entry.path).parent_path());
  }
  for (const std::filesystem::path& directory : directories) {
    for (int slot = 0; slot < record::kSpareSlots; ++slot) {
      std::string name = record::kSparePrefix + std::to_string(slot);
      unlink((directory / name).c_str());
    }
  }
}

}  // namespace heaprec::cli
