// The files a running process has mapped, by name in a directory of links for the symbolizer's
// binary path (symbolize/file_search.h, DIR/<name>): the executable through /proc/PID/exe, every
// other mapped file through /proc/PID/map_files (which takes CAP_SYS_ADMIN) or else
// /proc/PID/root/PATH. A binary replaced on disk while the process ran (an upgrade, a redeploy: the
// process an operator attaches to has often outlived its binary) is reached as the process has it,
// and one in another mount namespace (a container's) at all. The symbolizer still takes a file only
// for the build id the profile recorded.
#pragma once

#include <string>

#include "cli/remote_process.h"

namespace heaprec::cli {

class ProcessBinaries {
 public:
  explicit ProcessBinaries(const RemoteProcess& process);
  ~ProcessBinaries();  // removes the links and the directory
  ProcessBinaries(const ProcessBinaries&) = delete;
  ProcessBinaries& operator=(const ProcessBinaries&) = delete;

  // "" when the directory could not be made.
  const std::string& directory() const { return directory_; }

 private:
  std::string directory_;
};

}  // namespace heaprec::cli
