// Temporary file + rename: the only way to replace a file so that a crash or a full disk never
// leaves a truncated profile behind.
#include "render/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

#include "profile/pprof_writer.h"

namespace heaprec::render {
namespace {

constexpr int kMaxNameAttempts = 100;

[[noreturn]] void Fail(const std::string& path, const std::string& what, int err) {
  throw OutputError("cannot write " + path + ": " + what + ": " + std::strerror(err));
}

// Returns an unpredictable suffix so that another user cannot pre-create our temporary name.
std::string RandomSuffix() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(rng()));
  return buf;
}

}  // namespace

void WriteFileAtomically(const std::string& path, std::string_view data) {
  if (path.empty()) throw OutputError("cannot write: empty file name");
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.empty()) throw OutputError("cannot write " + path + ": not a file name");

  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < kMaxNameAttempts && fd < 0; ++attempt) {
    tmp = (slash == std::string::npos ? "" : dir) + "." + base + ".tmp." + RandomSuffix();
    // O_EXCL|O_NOFOLLOW: never open something an attacker planted under our name.
    fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) Fail(path, "cannot create temporary file in " + dir, errno);
  }
  if (fd < 0) Fail(path, "cannot create temporary file in " + dir, EEXIST);

  auto abandon = [&](const std::string& what, int err) {
    if (fd >= 0) close(fd);
    unlink(tmp.c_str());
    Fail(path, what, err);
  };
  size_t written = 0;
  while (written < data.size()) {
    ssize_t n = write(fd, data.data() + written, data.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      abandon("write failed", errno);
    }
    written += static_cast<size_t>(n);
  }
  // close() can report a deferred write error (NFS, quota), so it must be checked.
  int rc = close(fd);
  fd = -1;
  if (rc != 0) abandon("close failed", errno);
  if (rename(tmp.c_str(), path.c_str()) != 0) abandon("rename failed", errno);
}

void WriteProfileFile(const profile::Profile& profile, const std::string& path) {
  WriteFileAtomically(path, profile::EncodeProfile(profile, /*gzip=*/true));
}

}  // namespace heaprec::render
