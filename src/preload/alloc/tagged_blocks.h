// Tagged blocks: how free() knows a block is sampled without touching a cache line of its own.
//
// When the allocator heaprec forwards to is glibc, every block heaprec samples is allocated larger
// and handed out `offset` bytes into glibc's block, with two words just below the program's
// address:
//
//   glibc's block                                     the program's block
//   ├────────────── offset - 16 ──────────────┼ handle:offset ┼  tag  ┼──── size bytes ────
//                                             ptr-16          ptr-8   ptr
//
//   tag = kTag                  offset = 16 (malloc, calloc, realloc) or the alignment (≥ 16),
//                               in the low 32 bits; above them the recorder's handle for the
//                               block (HeapRecorder::RecordWithHandle), 0 until it is recorded
//
// The handle is how the slow paths find the block's record without looking its address up (in
// exact mode that lookup was a cache miss or two on every free of a large heap).
//
// For every other block ptr-8 is glibc's chunk size field, which glibc's free() reads next anyway,
// so the test reads nothing the free would not. It is also exact: a chunk size is below 2^63 and
// the tag has its top bit set, so an unsampled block never looks tagged. One constant for every
// block (an earlier version mixed in the address, which cost the free path an instruction and
// made the test no more exact). The tag is cleared before the block goes back to glibc.
//
// Why not a table: a table keyed by address (the 64 KiB SampledKeyFilter this replaces) is out of
// the L1 cache once a program frees many distinct addresses, and then costs a miss on nearly every
// free (measured 1.22x the do-nothing interposer's CPU on malloc_stress; docs/design/free-path.md).
//
// Another allocator (jemalloc preloaded after heaprec, a program linking its own) has no header
// heaprec may read, and may hand sampled blocks to functions heaprec does not interpose (sdallocx,
// sallocx): there blocks are never tagged and free() asks the recorder's SampledKeyFilter instead.
// RealAllocator::tagged_blocks says which of the two is in force; it never changes after the
// allocator is resolved, and no block is tagged before that.
//
// Everything here is lock-free, allocation-free apart from the real allocator's own calls, and
// async-signal-safe except the functions that call the real allocator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "preload/alloc/real_allocator.h"

namespace heaprec::preload {

constexpr std::uint64_t kTag = 0xd5a9'7c3e'41b8'6f0bull;  // top bit set
static_assert((kTag >> 63) == 1, "a tag must never equal a chunk size");
constexpr std::size_t kTagOffset =
    16;  // malloc's own alignment: the program's pointer stays aligned

inline std::uint64_t TagWord(const void* block, std::ptrdiff_t at) {
  std::uint64_t word;
  std::memcpy(&word, static_cast<const char*>(block) + at, sizeof(word));
  return word;
}

// True when `block` (not null, allocated by the program's allocator) is a tagged sampled block.
// Only meaningful while g_real.tagged_blocks holds.
inline bool IsTagged(const void* block) { return TagWord(block, -8) == kTag; }

// The recorder's handle for a tagged block, 0 when none was set.
inline std::uint32_t HandleOf(const void* block) {
  return static_cast<std::uint32_t>(TagWord(block, -16) >> 32);
}
void SetHandle(void* block, std::uint32_t handle);

// The real allocator's block of the given kind, untagged.
void* AllocateUntagged(AllocKind kind, std::size_t size, std::size_t alignment);

// A block of `size` bytes of the given kind (`alignment` for the aligned kinds), tagged. Null with
// errno set when the allocator fails, or when the request cannot carry a tag (an alignment or size
// near the address space's size) and the untagged allocation failed as it will. *tagged says which.
void* AllocateTagged(AllocKind kind, std::size_t size, std::size_t alignment, bool* tagged);

// Gives a tagged block back to the allocator.
void FreeTagged(void* block);

// malloc_usable_size of a tagged block, as the program sees it.
std::size_t TaggedUsableSize(const void* block);

// glibc's realloc of a tagged block into a tagged block of `size` bytes, growing in place where
// glibc can: *moved is the new block, or null (the old one untouched) when glibc fails. Returns
// false, doing nothing, for a block tagged at an aligned offset, which glibc's realloc would not
// keep aligned: realloc must then move it by hand.
bool ReallocTagged(void* block, std::size_t size, void** moved);

// Frees any block of the program's: tagged or not.
inline void ReleaseToAllocator(void* block) {
  if (g_real.tagged_blocks && block != nullptr && IsTagged(block)) {
    FreeTagged(block);
  } else {
    g_real.free(block);
  }
}

}  // namespace heaprec::preload
