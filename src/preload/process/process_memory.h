// What the kernel and the allocator say about the process's memory: its resident set (the symptom
// users see) and glibc's own accounting, so that a profile can say how much of the RSS its heap
// explains. Both read without malloc.
#pragma once

#include <cstdint>

namespace heaprec::preload {

// The process's resident bytes and, of them, those backed by files (a shared library's pages,
// mapped files), from /proc/self/statm. False (both 0) when it cannot be read (no /proc, a
// seccomp filter, no descriptor left). Opens, reads and closes: no descriptor stays. Async-signal-
// safe.
bool ReadResidentBytes(std::uint64_t* resident, std::uint64_t* file_backed);

// glibc's accounting (mallinfo2): bytes in chunks the program holds (`in_use`, mmapped ones too),
// free bytes glibc keeps in its arenas (`kept_free`), and what its arenas and mmapped chunks span
// (`arena`). False (all 0) when the allocator is not glibc. Takes each arena's lock: never from a
// signal handler, nor anywhere a signal might have interrupted malloc.
struct MallocStats {
  std::uint64_t in_use = 0, kept_free = 0, arena = 0;
};
bool ReadMallocStats(MallocStats* stats);

}  // namespace heaprec::preload
