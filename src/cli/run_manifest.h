// The manifest of a `heaprec run` (schema/manifest.h): created empty before the program starts,
// read once it has ended, to learn every profile its processes wrote and the messages they could
// not print.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace heaprec::cli {

struct ManifestEntry {
  pid_t pid;
  std::string reason;
  std::string path;
};

// What the processes reported in the manifest: each profile file once, and the messages the
// library could not print because the program had redirected its stderr.
struct Manifest {
  std::vector<ManifestEntry> profiles;  // in the order first written
  std::vector<std::string> messages;
  std::vector<ManifestEntry> records;  // heap records, one per process that kept one
  // Why processes run unprofiled (a bad setting from the environment), each text once.
  std::vector<std::string> declined;
  std::vector<ManifestEntry> unwritten;  // profiles a process could not write (it said why)
  // Processes still running once the program ended (a daemon it started), found by their heap
  // record (path): they write their profiles when they end.
  std::vector<ManifestEntry> running;
};

// Whether a line names a profile file (not a message, heap record or refusal).
bool NamesProfile(const ManifestEntry& entry);

// Reads the manifest at `path`. A later line for the same profile replaces the earlier one (a peak
// profile is rewritten as the peak grows, and the file holds what was written last).
Manifest ReadManifest(const std::string& path);

// Reads the manifest while the processes still append to it: each call returns the lines
// completed since the last one, as written (no line replaces another here).
class ManifestTail {
 public:
  explicit ManifestTail(std::string path) : path_(std::move(path)) {}
  std::vector<ManifestEntry> ReadNew();

 private:
  std::string path_;
  std::uint64_t offset_ = 0;  // the end of the last complete line read
};

// Creates the empty manifest the processes append to; "" after saying why it could not. Closed at
// once (and close-on-exec meanwhile): the program must not inherit it.
std::string CreateManifest();

}  // namespace heaprec::cli
