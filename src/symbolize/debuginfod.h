// Debug files and executables fetched by build id from debuginfod servers, through elfutils'
// libdebuginfod: what distributions serve (https://debuginfod.debian.net, ...) and what
// `debuginfod -F DIR` serves from a directory. libdebuginfod keeps what it fetched in its own
// cache ($DEBUGINFOD_CACHE_PATH, default ~/.cache/debuginfod_client) and reads its other settings
// from the environment too (DEBUGINFOD_TIMEOUT, DEBUGINFOD_PROGRESS, DEBUGINFOD_MAXSIZE, ...).
#pragma once

#include <memory>
#include <string>

namespace heaprec::symbolize {

class DebuginfodClient {
 public:
  // `urls`: server URLs separated by spaces, as DEBUGINFOD_URLS holds them; "" for none, when
  // Find never asks anyone.
  explicit DebuginfodClient(std::string urls);
  ~DebuginfodClient();
  DebuginfodClient(const DebuginfodClient&) = delete;
  DebuginfodClient& operator=(const DebuginfodClient&) = delete;

  bool enabled() const { return !urls_.empty(); }
  const std::string& urls() const { return urls_; }

  enum class Artifact { kDebugInfo, kExecutable };
  struct Result {
    std::string path;   // the file in libdebuginfod's cache, "" when none
    std::string error;  // why not: "not found", or the error
  };
  // Asks the servers for the artifact of the build id (lowercase hex).
  Result Find(Artifact artifact, const std::string& build_id);

 private:
  struct Handle;
  std::string urls_;
  std::unique_ptr<Handle> handle_;  // begun on the first Find
};

}  // namespace heaprec::symbolize
