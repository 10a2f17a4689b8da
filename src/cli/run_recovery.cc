#include "cli/run_recovery.h"

#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "cli/heap_record_reader.h"
#include "schema/profile_schema.h"

namespace heaprec::cli {

void RecoverKilledProcesses(Manifest& written, pid_t root, int root_signal) {
  for (const ManifestEntry& entry : written.records) {
    std::error_code ec;
    // A process that wrote its final profile removed its record; so did one that exec'd.
    if (!std::filesystem::exists(entry.path, ec)) continue;
    try {
      HeapRecord record = ReadHeapRecord(entry.path);
      if (record.ended) {
        unlink(entry.path.c_str());
        continue;
      }
      if (RecordOwnerIsRunning(record)) continue;  // a daemon that outlived the program
      RecoveredFiles files =
          WriteRecoveredProfiles(record, "", entry.pid == root ? root_signal : 0);
      written.profiles.push_back({entry.pid, schema::kReasonKilled, files.death});
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

}  // namespace heaprec::cli
