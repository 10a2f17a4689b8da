#include "cli/process_binaries.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string_view>

namespace heaprec::cli {
namespace {

constexpr std::string_view kDeleted = " (deleted)";

bool Readable(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  close(fd);
  return true;
}

}  // namespace

ProcessBinaries::ProcessBinaries(const RemoteProcess& process) {
  char pattern[] = "/tmp/heaprec-binaries.XXXXXX";
  if (mkdtemp(pattern) == nullptr) return;
  directory_ = pattern;
  std::string executable;
  {
    std::error_code ec;
    executable = std::filesystem::read_symlink(process.ProcPath("exe"), ec).string();
  }
  for (const Mapping& m : process.Mappings()) {
    if (m.offset != 0 || m.path.empty() || m.path[0] != '/') continue;
    std::string path = m.path;
    if (path.size() > kDeleted.size() && path.ends_with(kDeleted)) {
      path.resize(path.size() - kDeleted.size());
    }
    const std::string link = directory_ + "/" + std::filesystem::path(path).filename().string();
    std::error_code ec;
    if (std::filesystem::is_symlink(link, ec)) continue;  // the first file of that name
    std::string target;
    if (m.path == executable) {
      target = process.ProcPath("exe");
    } else {
      char range[64];
      std::snprintf(range, sizeof(range), "map_files/%llx-%llx",
                    static_cast<unsigned long long>(m.start),
                    static_cast<unsigned long long>(m.end));
      target = process.ProcPath(range);
      if (!Readable(target)) target = process.ProcPath("root") + path;
    }
    if (!Readable(target)) continue;
    symlink(target.c_str(), link.c_str());
  }
}

ProcessBinaries::~ProcessBinaries() {
  if (directory_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(directory_, ec);  // the links only: they are not followed
}

}  // namespace heaprec::cli
