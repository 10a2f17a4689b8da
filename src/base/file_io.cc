#include "base/file_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

namespace heaprec::base {
namespace {

constexpr int kMaxNameAttempts = 100;

// Closes the descriptor however the function that opened it ends.
struct Closer {
  int fd;
  ~Closer() { close(fd); }
};

// The steps are plain strings so that errno is read before anything is allocated.
[[noreturn]] void FailRead(const char* step, const std::string& path, int error) {
  throw FileError(std::string(step) + " " + path + ": " + std::strerror(error), error);
}

// "cannot write PATH: STEP: REASON", the one shape of the writer's errors.
[[noreturn]] void FailWrite(const std::string& path, const std::string& step, int error) {
  throw FileError("cannot write " + path + ": " + step + ": " + std::strerror(error), error);
}

}  // namespace

std::string ReadFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) FailRead("cannot open", path, errno);
  Closer closer{fd};
  // Read to the end rather than by st_size: files under /proc report a size of 0.
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) FailRead("cannot read", path, errno);
    if (n == 0) return text;
    text.append(buffer, static_cast<size_t>(n));
  }
}

void WriteFileAtomically(const std::string& path, std::string_view data) {
  detail::WriteFileAtomically(path, data, detail::RandomSuffix);
}

namespace detail {

std::string RandomSuffix() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(rng()));
  return buf;
}

void SplitFileName(const std::string& path, std::string* dir, std::string* base) {
  if (path.empty()) throw FileError("cannot write: empty file name", EINVAL);
  size_t slash = path.rfind('/');
  *dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  *base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base->empty()) throw FileError("cannot write " + path + ": not a file name", EINVAL);
}

int CreateTemporaryFile(const std::string& path, const std::function<std::string()>& next_suffix,
                        std::string* name) {
  std::string dir, base;
  SplitFileName(path, &dir, &base);
  std::string where = dir.empty() ? "." : dir;
  for (int attempt = 0; attempt < kMaxNameAttempts; ++attempt) {
    *name = dir + "." + base + ".tmp." + next_suffix();
    // O_EXCL|O_NOFOLLOW: never open something an attacker planted under our name.
    int fd = open(name->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) return fd;
    int error = errno;  // before the message's strings are built
    if (error != EEXIST) FailWrite(path, "cannot create temporary file in " + where, error);
  }
  FailWrite(path, "cannot create temporary file in " + where, EEXIST);
}

void FillTemporaryFile(const std::string& path, int fd, const std::string& name,
                       std::string_view data, Durability durability) {
  auto abandon = [&](const char* step, int error) {
    if (fd >= 0) close(fd);
    unlink(name.c_str());
    FailWrite(path, step, error);
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
  if (durability == Durability::kSyncedBeforeRename) {
    // The data reaches the disk before the rename makes it the file: after a power loss the name
    // holds the old content or the new, never an empty file (the push ledger must not forget).
    if (fsync(fd) != 0) abandon("fsync failed", errno);
  } else {
    // Advice, so its result is not an error: a file system that cannot start writeback early
    // writes the data back at its own time. ext4 does the same itself for a rename over a file.
    sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
  }
  // close() can report a deferred write error (NFS, quota), so it must be checked.
  int rc = close(fd);
  fd = -1;
  if (rc != 0) abandon("close failed", errno);
}

void ReplaceWithTemporaryFile(const std::string& path, const std::string& name) {
  if (rename(name.c_str(), path.c_str()) == 0) return;
  int error = errno;
  unlink(name.c_str());
  FailWrite(path, "rename failed", error);
}

void WriteFileAtomically(const std::string& path, std::string_view data,
                         const std::function<std::string()>& next_suffix) {
  std::string tmp;
  int fd = CreateTemporaryFile(path, next_suffix, &tmp);
  FillTemporaryFile(path, fd, tmp, data, Durability::kSyncedBeforeRename);
  ReplaceWithTemporaryFile(path, tmp);
}

}  // namespace detail
}  // namespace heaprec::base
