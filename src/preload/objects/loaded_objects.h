// What the dynamic loader has mapped: the object (executable or shared library) that contains an
// address, with its path, its GNU build id and its executable segments, for the pprof Mapping table
// and for remembering libraries that dlclose unloads.
//
// Built on glibc's _dl_find_object, which is lock-free and async-signal-safe, and on the ELF and
// program headers the loader left mapped. Nothing here takes the loader's locks (dl_iterate_phdr
// takes one that a thread of the parent may hold at fork(), so a child that called it could wait
// forever), reads /proc, opens a file or allocates: a crash handler and a child of a
// multithreaded fork() may call all of it.
#pragma once

#include <limits.h>

#include <cstddef>
#include <cstdint>

namespace heaprec::preload {

// A build id of up to 20 bytes as lowercase hex, plus the terminating NUL.
inline constexpr std::size_t kBuildIdHexBytes = 41;

struct LoadedObject {
  static constexpr int kMaxSegments = 8;
  std::uintptr_t base;                // load bias (l_addr)
  std::uintptr_t map_start, map_end;  // everything the object mapped
  char path[PATH_MAX];
  char build_id[kBuildIdHexBytes];  // "" when it has none
  int segment_count;
  struct {
    std::uint64_t start, limit, file_offset;  // page-aligned, as /proc/self/maps would show them
  } segments[kMaxSegments];                   // executable PT_LOAD segments
};

// Records the executable's path (the loader names it ""). Call once at start-up.
void RememberExecutablePath();

// Describes the object containing `address`; false if no loaded object contains it.
bool DescribeObjectAt(std::uintptr_t address, LoadedObject* out);

// Describes the object behind a dlopen handle (false for handles heaprec cannot resolve).
bool DescribeLoadedObject(void* handle, LoadedObject* out);

// Whether an object with that base and path is still loaded.
bool IsStillLoaded(const LoadedObject& object);

}  // namespace heaprec::preload
