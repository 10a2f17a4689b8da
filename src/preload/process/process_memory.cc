#include "preload/process/process_memory.h"

#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include "core/own_descriptors.h"
#include "preload/alloc/real_allocator.h"

namespace heaprec::preload {
namespace {

// The next space-separated decimal field of `p`, advancing it.
std::uint64_t NextField(const char** p) {
  while (**p == ' ') ++*p;
  std::uint64_t value = 0;
  for (; **p >= '0' && **p <= '9'; ++*p) value = value * 10 + static_cast<std::uint64_t>(**p - '0');
  return value;
}

}  // namespace

bool ReadResidentBytes(std::uint64_t* resident, std::uint64_t* file_backed) {
  *resident = *file_backed = 0;
  char text[160];
  if (ReadSmallFile("/proc/self/statm", text, sizeof(text)) <= 0) return false;
  // size resident shared text lib data dt, in pages; "shared" counts file-backed resident pages.
  const char* p = text;
  NextField(&p);
  const std::uint64_t pages = NextField(&p), shared = NextField(&p);
  const auto page = static_cast<std::uint64_t>(getpagesize());
  *resident = pages * page;
  *file_backed = shared * page;
  return pages != 0;
}

bool ReadMallocStats(MallocStats* stats) {
  *stats = {};
  if (!g_real.glibc) return false;
  struct mallinfo2 info = mallinfo2();
  stats->in_use = info.uordblks + info.hblkhd;
  stats->kept_free = info.fordblks;
  stats->arena = info.arena + info.hblkhd;
  return true;
}

}  // namespace heaprec::preload
