// Tagged blocks: how free() knows a block is sampled without touching a cache line of its own.
//
// When the allocator heaprec forwards to is glibc, every block heaprec samples is allocated larger
// and handed out `offset` bytes into glibc's block, with the sample's ticket in the words just
// below the program's address:
//
//   glibc's block                                the program's block
//   ├──────── offset - 16 ─────────┼ A|contribution ┼ T|stack|handle ┼──── size bytes ────
//                      (offset)    ptr-16           ptr-8            ptr
//                      ptr-24
//
//   ptr-8   T = the top bit, set: the tag; bits 32-62 the stack's id, bits 0-31 the recorder's
//           handle (both 0 until the block is recorded)
//   ptr-16  A = the top bit, set when the offset is not 16; bits 0-62 what the object adds to the
//           recorder's live-bytes estimate
//   ptr-24  the offset, when A is set (an aligned block: its offset is the alignment, at least 32,
//           so the word is inside the block); otherwise the offset is 16, malloc's own alignment
//
// The ticket (HeapRecorder's ObjectTicket) is all the free of a sampled block needs: the handle
// finds the block's record without looking its address up, and the stack and contribution mean the
// record itself is never read (in exact mode, reading it was a cache miss on nearly every free of
// a large heap).
//
// For every other block ptr-8 is glibc's chunk size field, which glibc's free() reads next anyway,
// so the test reads nothing the free would not. It is also exact: a chunk size is below 2^63, so
// an unsampled block never has the top bit set; the test is one compare of the word's sign. The
// tag is cleared before the block goes back to glibc.
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

#include "core/heap_recorder.h"
#include "preload/alloc/real_allocator.h"

namespace heaprec::preload {

constexpr std::uint64_t kTagBit = std::uint64_t{1} << 63;
constexpr std::size_t kTagOffset =
    16;  // malloc's own alignment: the program's pointer stays aligned

inline std::uint64_t TagWord(const void* block, std::ptrdiff_t at) {
  std::uint64_t word;
  std::memcpy(&word, static_cast<const char*>(block) + at, sizeof(word));
  return word;
}

// True when `block` (not null, allocated by the program's allocator) is a tagged sampled block.
// Only meaningful while g_real.tagged_blocks() holds.
inline bool IsTagged(const void* block) {
  return static_cast<std::int64_t>(TagWord(block, -8)) < 0;
}

// The ticket kept in a tagged block's header; its handle is 0 when the block was not recorded.
inline ObjectTicket TicketOf(const void* block) {
  const std::uint64_t tag = TagWord(block, -8);
  return {static_cast<std::uint32_t>(tag), static_cast<StackId>((tag >> 32) & 0x7fff'ffff),
          static_cast<std::int64_t>(TagWord(block, -16) & ~kTagBit)};
}
inline std::uint32_t HandleOf(const void* block) {
  return static_cast<std::uint32_t>(TagWord(block, -8));
}
// Keeps `ticket` in a tagged block's header. A stack id needs 31 bits at most (StackTable's ids
// stay below 2^26).
void SetTicket(void* block, const ObjectTicket& ticket);

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
  if (g_real.tagged_blocks() && block != nullptr && IsTagged(block)) {
    FreeTagged(block);
  } else {
    g_real.free(block);
  }
}

}  // namespace heaprec::preload
