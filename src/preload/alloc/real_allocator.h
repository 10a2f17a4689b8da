// The allocator heaprec forwards to: whatever the program would use without heaprec.
//
// Usually that is glibc, reached through the __libc_* names it exports. But another allocator may
// be preloaded after heaprec (LD_PRELOAD=libheaprec.so:libjemalloc.so) or linked into the program;
// then every block must come from and go back to that allocator, including blocks heaprec handed
// out before it knew. So the table below starts out pointing at resolver trampolines, and the first
// call of any entry point resolves all of them at once, from a single allocator library:
//
//   g_real.malloc ──first call──▶ Resolve(): the library defining "malloc" for the program
//                                  (dlsym RTLD_DEFAULT, or RTLD_NEXT when that is heaprec itself)
//                                  glibc ─▶ __libc_* ;  other ─▶ its functions, with fallbacks
//                                  built on its malloc/memalign for what it lacks (jemalloc has no
//                                  pvalloc)
//
// Taking each function from "the next definition" independently would be wrong: a missing pvalloc
// would come from glibc and its blocks would then be freed by jemalloc.
//
// heaprec defines malloc_usable_size (a sampled block is tagged, tagged_blocks.h) and forwards it
// the same way; the allocators' extended APIs (mallocx, sdallocx, ...) it does not define: the
// program reaches them in the library heaprec forwards to, which is why blocks are tagged only when
// that library is glibc.
//
// Resolution needs no allocation (dlsym and dladdr of existing names do not allocate); a nested
// call during it, or a call from another thread racing it, is served by glibc directly.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {
void* __libc_malloc(std::size_t size);
void __libc_free(void* p);
void* __libc_calloc(std::size_t count, std::size_t size);
void* __libc_realloc(void* p, std::size_t size);
void* __libc_memalign(std::size_t alignment, std::size_t size);
void* __libc_valloc(std::size_t size);
void* __libc_pvalloc(std::size_t size);
}

namespace heaprec::preload {

// Which allocation function a slow path performs for the program (slow_paths.h, tagged_blocks.h).
enum class AllocKind : std::uint8_t {
  kMalloc,
  kCalloc,
  kMemalign,
  kAlignedAlloc,
  kValloc,
  kPvalloc
};

struct RealAllocator {
  void* (*malloc)(std::size_t);
  void (*free)(void*);
  void* (*calloc)(std::size_t, std::size_t);
  void* (*realloc)(void*, std::size_t);
  void* (*memalign)(std::size_t, std::size_t);
  int (*posix_memalign)(void**, std::size_t, std::size_t);
  void* (*aligned_alloc)(std::size_t, std::size_t);
  void* (*valloc)(std::size_t);
  void* (*pvalloc)(std::size_t);
  std::size_t (*usable_size)(void*);
  // Sampled blocks carry a tag below the program's pointer (tagged_blocks.h), only with glibc: then
  // 1, the lowest address whose free reads the tag; otherwise the highest address, which no block
  // has. One unsigned comparison in free then says both "not null" and "tags are read".
  std::uintptr_t lowest_tagged;
  // glibc's malloc is in charge: its accounting (mallinfo2) and its chunk headers are the heap's.
  bool glibc;

  bool tagged_blocks() const { return lowest_tagged == kTagsRead; }
  static constexpr std::uintptr_t kTagsRead = 1, kTagsNotRead = ~std::uintptr_t{0};
};

// Read on every allocation: plain function pointers, written once by the resolver.
// Hidden: the hooks reach it PC-relative (`jmp *g_real(%rip)`) rather than through the GOT.
extern RealAllocator g_real __attribute__((visibility("hidden")));

// glibc's rule for posix_memalign: a power-of-two multiple of sizeof(void*), else EINVAL.
bool IsPosixMemalignAlignment(std::size_t alignment);

// Resolves g_real now if it is not yet (start-up calls it so that the choice is made early).
void ResolveRealAllocator();

// A library injected into a running process (attach/injected.h) never tags its blocks: a block it
// hands out may be freed by code whose calls never reach heaprec (a library loaded after the last
// look, function pointers taken before the attach, any call after the detach), which would hand
// glibc a pointer shifted by the tag. The recorder's filter answers instead, as over jemalloc.
// Call before any hook can run.
void UseUntaggedBlocks();

// Null when the program's malloc is heaprec's; otherwise the file of the library that provides it,
// loaded before heaprec (LD_PRELOAD=libjemalloc.so:libheaprec.so), or the executable itself when it
// defines malloc (*in_executable): either way the program never calls heaprec.
const char* ForeignProgramMalloc(bool* in_executable);

}  // namespace heaprec::preload
