// What glibc's malloc holds in another process, by block size, read from outside
// (docs/design/attach.md, "The heap before the attach").
//
// The memory is read with process_vm_readv while the process runs on: nothing in it is stopped,
// locked or touched, and a read of memory that went away meanwhile only fails. The chunks are
// walked where glibc 2.26-2.40 lays them out on x86-64: the main arena from the start of [heap]
// to its top chunk, each other arena's heaps (64 MiB-aligned, heap_info first, the arena's state
// after the first one's), and the chunks mmapped on their own (size | IS_MMAPPED at the start of
// a page of an anonymous mapping). A chunk is in use when the next one's PREV_INUSE bit says so;
// blocks in a thread's tcache or a fastbin count as in use, as glibc marks them. Every header is
// checked (size a multiple of 16, inside its heap, the walk ending exactly at the heap's end): a
// heap whose walk does not is counted as far as it went, and the result says so.
#pragma once

#include <cstdint>
#include <vector>

#include "cli/remote_process.h"
#include "schema/attach.h"

namespace heaprec::cli {

struct GlibcHeap {
  schema::HeapSizeClass by_size[schema::kHeapSizeClasses] = {};
  std::uint64_t in_use = 0;  // the total of by_size's bytes
  int heaps = 0;             // contiguous heaps walked (the main arena's and the others')
  int heaps_incomplete = 0;  // of those, walks that stopped at a header that did not check out
  std::uint64_t mmapped_blocks = 0;
};

// The size class of an in-use chunk of `chunk_size` bytes (schema::HeapSizeClass).
int HeapSizeClassOf(std::uint64_t chunk_size, bool mmapped);

// Reads the heap of the process whose mappings are `maps`, for at most `budget_ms` (a heap too
// large to read in that time is counted as far as it went, as an incomplete walk).
GlibcHeap ReadGlibcHeap(const RemoteProcess& process, const std::vector<Mapping>& maps,
                        int budget_ms = 2000);

}  // namespace heaprec::cli
