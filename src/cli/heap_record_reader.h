// Reads a heap record (schema/heap_record_format.h), the file a profiled process keeps of its
// sampled live heap, and turns it into the profiles the process would have written had it been able
// to: the heap at death (reason=killed, at the final profile's name) and, when the record holds a
// larger one, the peak (reason=peak). The reader trusts nothing in the file: every offset, count
// and node id is checked against the file's size, and a stack that loops or leaves the file ends
// there.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "schema/heap_record_format.h"

namespace heaprec::cli {

struct RecordedObject {
  std::vector<std::uint64_t> frames;  // leaf first
  std::uint64_t size = 0;
  double weight = 0;
  std::uint64_t alloc_time_ns = 0;  // a site's: its oldest object's
  std::uint64_t samples = 1;        // sampled objects: a peak copy's entries are sites
};

struct RecordedMapping {
  std::uint64_t start = 0, limit = 0, file_offset = 0;
  std::string path, build_id;
};

struct HeapRecord {
  std::string file;  // the record's own path
  std::uint64_t pid = 0;
  std::uint64_t start_time_ns = 0;
  std::uint64_t sample_interval = 0;
  // Where the process's final profile would have gone: its name, in the record's directory.
  std::string profile_path;
  std::string program;
  bool ended = false;       // the process wrote its final profile: nothing to recover
  bool incomplete = false;  // the record stopped keeping up (its file could not grow)
  // How the process ended, when it saw its end but could not write its final profile
  // (record::WithEnding): the reason that profile would have had ("" for none seen: a kill), the
  // signal that ended it, and why the write failed (an errno).
  std::string ending_reason;
  int ending_signal = 0;
  int write_error = 0;
  std::uint64_t death_time_ns = 0;  // the file's last modification
  std::vector<RecordedObject> live;
  std::vector<RecordedObject> peak;  // empty when the record holds no peak copy
  std::int64_t peak_bytes = 0;
  std::uint64_t peak_time_ns = 0;
  std::vector<RecordedMapping> mappings;
  // A process heaprec attach loaded heaprec into: what its profiles say of the time before the
  // attach (held_by_size terminated within its array).
  std::optional<record::RecordedAttach> attach;
};

// The estimated bytes the objects stand for (the sum of weight x size).
std::int64_t InuseBytes(const std::vector<RecordedObject>& objects);

// Throws std::runtime_error naming the file for anything that is not a readable heap record.
HeapRecord ReadHeapRecord(const std::string& path);

// Whether the process that kept the record still runs: the record's pid, or any process (one in
// another pid namespace knows itself by another pid), maps the record file.
bool RecordOwnerIsRunning(const HeapRecord& record);

struct RecoveredFiles {
  std::string death;   // the heap at death
  std::string reason;  // its reason: killed, or the ending the record names (HeapRecord)
  std::string peak;    // "" when the peak on record is not above the heap at death
};

// Writes the profiles: the heap at death to `death_path` ("" for the record's own final-profile
// name, or "<record>.pb.gz" without one), the peak beside it (NAME.peak.pb.gz) when larger.
// `signal_number` (0: unknown) goes into the death profile's comments. Throws on write errors.
RecoveredFiles WriteRecoveredProfiles(const HeapRecord& record, const std::string& death_path,
                                      int signal_number);

// The records in `directory` ("*.record"), sorted.
std::vector<std::string> FindHeapRecords(const std::string& directory);

}  // namespace heaprec::cli
