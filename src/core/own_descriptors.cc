#include "core/own_descriptors.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

namespace heaprec {

namespace {

constexpr rlim_t kHighestFloor = 768;

// The floor once it is kHighestFloor, which a later raise of the limit leaves where it is: asked of
// the kernel (a system call, which costs a short-lived process more than its open) only until then.
// A program that lowers its limit below the floor makes F_DUPFD fail with EINVAL, and the floor is
// asked for again (MoveToOwnRange). 0: not known.
std::atomic<int> g_known_floor{0};

}  // namespace

int OwnDescriptorFloor() {
  struct rlimit limit;
  rlim_t soft = getrlimit(RLIMIT_NOFILE, &limit) == 0 ? limit.rlim_cur : 1024;
  rlim_t floor =
      soft == RLIM_INFINITY || soft / 4 * 3 > kHighestFloor ? kHighestFloor : soft / 4 * 3;
  if (floor == kHighestFloor) g_known_floor.store(kHighestFloor, std::memory_order_relaxed);
  return floor > STDERR_FILENO + 1 ? static_cast<int>(floor) : STDERR_FILENO + 1;
}

int MoveToOwnRange(int fd) {
  if (fd < 0) return fd;
  int floor = g_known_floor.load(std::memory_order_relaxed);
  if (floor == 0) floor = OwnDescriptorFloor();
  if (fd >= floor) return fd;
  int moved = fcntl(fd, F_DUPFD_CLOEXEC, floor);
  if (moved < 0 && errno == EINVAL) {  // the limit went below the floor known: ask again
    g_known_floor.store(0, std::memory_order_relaxed);
    floor = OwnDescriptorFloor();
    if (fd >= floor) return fd;
    moved = fcntl(fd, F_DUPFD_CLOEXEC, floor);
  }
  if (moved < 0) {
    if (fd > STDERR_FILENO) return fd;  // nothing free up there: a low number, but not 0-2
    moved = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
  }
  int saved_errno = errno;
  close(fd);
  errno = saved_errno;
  return moved;
}

bool RaiseDescriptorLimitByOne(rlimit* before) {
  if (getrlimit(RLIMIT_NOFILE, before) != 0 || before->rlim_cur == RLIM_INFINITY) return false;
  if (before->rlim_max != RLIM_INFINITY && before->rlim_cur >= before->rlim_max) return false;
  rlimit raised = {before->rlim_cur + 1, before->rlim_max};
  return setrlimit(RLIMIT_NOFILE, &raised) == 0;
}

void RestoreDescriptorLimit(const rlimit& before) {
  rlimit now;
  if (getrlimit(RLIMIT_NOFILE, &now) != 0 || now.rlim_cur != before.rlim_cur + 1) return;
  rlimit restored = {before.rlim_cur, now.rlim_max};
  setrlimit(RLIMIT_NOFILE, &restored);
}

int OpenOwn(const char* path, int flags, mode_t mode) {
  return MakeOwn([&] { return open(path, flags | O_CLOEXEC, mode); });
}

ssize_t ReadSmallFile(const char* path, char* text, std::size_t size) {
  int fd = OpenOwn(path, O_RDONLY, 0);
  if (fd < 0) return -1;
  ssize_t n = read(fd, text, size - 1);
  close(fd);
  if (n < 0) return -1;
  text[n] = '\0';
  return n;
}

bool OpenOwnFile(const char* path, int flags, mode_t mode, OwnFile* file) {
  int fd = OpenOwn(path, flags, mode);
  if (fd < 0) return false;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int saved_errno = errno;
    close(fd);
    errno = saved_errno;
    return false;
  }
  *file = {fd, st.st_dev, st.st_ino};
  return true;
}

bool StillOwn(const OwnFile& file, struct stat* status) {
  struct stat st;
  if (status == nullptr) status = &st;
  return file.fd >= 0 && fstat(file.fd, status) == 0 && status->st_dev == file.device &&
         status->st_ino == file.inode;
}

int CloseOwnFile(OwnFile* file) {
  int fd = file->fd;
  bool own = StillOwn(*file);
  file->fd = -1;
  if (!own) return EBADF;
  return close(fd) == 0 ? 0 : errno;
}

bool OwnFileSink::Write(const void* data, std::size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  while (size > 0) {
    if (!StillOwn(file_)) {
      lost_ = true;
      errno = EBADF;
      return false;
    }
    ssize_t n = write(file_.fd, bytes, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes += n;
    size -= static_cast<std::size_t>(n);
    written_ += static_cast<std::uint64_t>(n);
  }
  return true;
}

}  // namespace heaprec
