#include "core/prefault.h"

#include <errno.h>
#include <sys/mman.h>

#include <cstdint>

namespace heaprec {

void PrefaultForWrite(void* begin, std::size_t bytes) {
#ifdef MADV_POPULATE_WRITE
  constexpr std::uintptr_t kPage = 4096;
  auto low = reinterpret_cast<std::uintptr_t>(begin) & ~(kPage - 1);
  auto high = (reinterpret_cast<std::uintptr_t>(begin) + bytes + kPage - 1) & ~(kPage - 1);
  if (bytes == 0 || high <= low) return;
  int saved_errno = errno;
  madvise(reinterpret_cast<void*>(low), high - low, MADV_POPULATE_WRITE);
  errno = saved_errno;
#else
  (void)begin;
  (void)bytes;
#endif
}

}  // namespace heaprec
