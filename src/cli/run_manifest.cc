#include "cli/run_manifest.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "schema/manifest.h"

namespace heaprec::cli {
namespace {

// Adds a profile, or updates the entry of a path listed before: a peak profile is rewritten each
// time the peak grows, and the file holds what was written last.
void AddProfile(std::vector<ManifestEntry>* profiles, ManifestEntry entry) {
  for (ManifestEntry& listed : *profiles) {
    if (listed.path == entry.path) {
      listed = std::move(entry);
      return;
    }
  }
  profiles->push_back(std::move(entry));
}

// One line: PID, reason, path (or message). False for a line that is not one.
bool ParseLine(const std::string& line, ManifestEntry* e) {
  std::istringstream fields(line);
  std::string pid;
  if (!std::getline(fields, pid, schema::kManifestSeparator) ||
      !std::getline(fields, e->reason, schema::kManifestSeparator) ||
      !std::getline(fields, e->path)) {
    return false;
  }
  e->pid = static_cast<pid_t>(std::atoi(pid.c_str()));
  return true;
}

}  // namespace

std::vector<ManifestEntry> ManifestTail::ReadNew() {
  std::vector<ManifestEntry> entries;
  std::ifstream in(path_, std::ios::binary);
  if (!in.seekg(static_cast<std::streamoff>(offset_))) return entries;
  std::string line;
  // Only lines with their newline: a process may be writing the last one now.
  while (std::getline(in, line) && !in.eof()) {
    offset_ += line.size() + 1;
    ManifestEntry e;
    if (ParseLine(line, &e)) entries.push_back(std::move(e));
  }
  return entries;
}

bool NamesProfile(const ManifestEntry& entry) {
  return entry.reason != schema::kManifestMessage && entry.reason != schema::kManifestRecord &&
         entry.reason != schema::kManifestDeclined && entry.reason != schema::kManifestUnwritten;
}

Manifest ReadManifest(const std::string& path) {
  Manifest manifest;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    ManifestEntry e;
    if (!ParseLine(line, &e)) continue;
    if (e.reason == schema::kManifestMessage) {
      manifest.messages.push_back(std::move(e.path));
    } else if (e.reason == schema::kManifestRecord) {
      manifest.records.push_back(std::move(e));
    } else if (e.reason == schema::kManifestUnwritten) {
      manifest.unwritten.push_back(std::move(e));
    } else if (e.reason == schema::kManifestDeclined) {
      // Every process of a program reads the same environment: one line says it for all.
      if (std::find(manifest.declined.begin(), manifest.declined.end(), e.path) ==
          manifest.declined.end()) {
        manifest.declined.push_back(std::move(e.path));
      }
    } else {
      AddProfile(&manifest.profiles, std::move(e));
    }
  }
  return manifest;
}

std::string CreateManifest() {
  std::string manifest =
      (std::filesystem::temp_directory_path() / "heaprec-manifest-XXXXXX").string();
  int fd = mkostemp(manifest.data(), O_CLOEXEC);
  if (fd < 0) {
    std::cerr << "heaprec run: cannot create a temporary file: " << std::strerror(errno) << "\n";
    return "";
  }
  close(fd);
  return manifest;
}

}  // namespace heaprec::cli
