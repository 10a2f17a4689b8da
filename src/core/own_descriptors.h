// heaprec's own descriptors inside someone else's process, kept out of the program's way.
//
// open() returns the lowest free number, and programs reuse low numbers behind their own back:
// bash 5.2 closes descriptors 3 and 4 twice in `$(...)`, daemons dup2 onto small numbers. A
// profile writer holding number 3 then has its file closed under it, and the program's next open()
// gets the number: heaprec's remaining writes would land in the program's file, and its close()
// would close the program's. So heaprec's descriptors sit high (OwnDescriptorFloor), and a file it
// writes is known by its inode too (OwnFile): before each write and before the close, heaprec
// checks that the number still names the file it created, and never touches one that does not.
//
// Every descriptor is close-on-exec and never 0-2. No malloc, no locks: async-signal-safe.
#pragma once

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "core/byte_sink.h"

namespace heaprec {

// The lowest number heaprec's descriptors take: three quarters of the soft RLIMIT_NOFILE, at most
// 768, so that a program's own numbers (which open() hands out from the bottom) rarely reach it.
int OwnDescriptorFloor();

// A new descriptor (from open(), socket(), accept()) moved to the floor or above, close-on-exec;
// when nothing is free up there, to the lowest number above 2. -1 passes through. Returns the
// descriptor or -1 with errno set.
int MoveToOwnRange(int fd);

// The soft RLIMIT_NOFILE one higher, when the hard limit allows it: true, with the limits before in
// *before. For MakeOwn alone.
bool RaiseDescriptorLimitByOne(rlimit* before);
// The soft limit back where it was before the raise, unless the program has set another since.
void RestoreDescriptorLimit(const rlimit& before);

// A descriptor made by `make` (open, socket, accept4; -1 with errno on failure), moved to the own
// range. When the program has every number below its soft RLIMIT_NOFILE in use (a descriptor leak,
// often the very incident heaprec is attached for), `make` fails with EMFILE and a profile would be
// lost: it is made once more with the soft limit one higher (never above the hard limit) and the
// limit is put back at once. heaprec's descriptor then takes the number just above the program's
// range, and the program's own calls fail as before; only one of them made between the raise and
// heaprec's call could take that number, and heaprec's call then fails as it would have.
template <typename Make>
int MakeOwn(Make make) {
  int fd = make();
  rlimit before;
  if (fd < 0 && errno == EMFILE && RaiseDescriptorLimitByOne(&before)) {
    fd = make();
    int saved_errno = errno;
    RestoreDescriptorLimit(before);
    errno = saved_errno;
  }
  return MoveToOwnRange(fd);
}

// open() with O_CLOEXEC, moved to the own range. Returns the descriptor or -1 with errno set.
int OpenOwn(const char* path, int flags, mode_t mode);

// Reads up to size - 1 bytes of a small file (a /proc/self file) in one read() through an own
// descriptor, NUL-terminated. Returns the length, or -1 when it could not be opened or read.
ssize_t ReadSmallFile(const char* path, char* text, std::size_t size);

// A file heaprec opened, with the identity of what it opened.
struct OwnFile {
  int fd = -1;
  dev_t device = 0;
  ino_t inode = 0;
};

// OpenOwn, remembering the file's identity. False with errno set on failure.
bool OpenOwnFile(const char* path, int flags, mode_t mode, OwnFile* file);

// Whether file->fd still names the file heaprec opened (false once the program closed the number,
// or closed it and opened something of its own there). When it does, and `status` is given, the
// file's fstat is left there (one system call answers both questions).
bool StillOwn(const OwnFile& file, struct stat* status = nullptr);

// Closes the descriptor if it is still heaprec's; a number the program took over is left alone.
// Returns 0, EBADF when the number was no longer heaprec's, or close()'s errno.
int CloseOwnFile(OwnFile* file);

// Writes to an OwnFile, checking before each write that it is still heaprec's: bytes never go into
// a file of the program's. Counts what it wrote, so that the writer can check the file's size.
class OwnFileSink : public ByteSink {
 public:
  explicit OwnFileSink(const OwnFile& file) : file_(file) {}
  bool Write(const void* data, std::size_t size) override;
  std::uint64_t written() const { return written_; }
  bool lost() const { return lost_; }  // the program took the descriptor over

 private:
  const OwnFile& file_;
  std::uint64_t written_ = 0;
  bool lost_ = false;
};

}  // namespace heaprec
