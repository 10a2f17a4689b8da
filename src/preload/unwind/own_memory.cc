#include "preload/unwind/own_memory.h"

#include <errno.h>
#include <sys/uio.h>
#include <unistd.h>

namespace heaprec::preload {

bool ReadOwnMemory(void* to, std::uintptr_t from, std::size_t bytes) {
  iovec local = {to, bytes};
  iovec remote = {reinterpret_cast<void*>(from), bytes};
  int saved_errno = errno;
  bool ok = process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(bytes);
  errno = saved_errno;
  return ok;
}

bool IsReadable(std::uintptr_t address, std::size_t bytes) {
  char buffer[16];
  return ReadOwnMemory(buffer, address, bytes < sizeof(buffer) ? bytes : sizeof(buffer));
}

}  // namespace heaprec::preload
