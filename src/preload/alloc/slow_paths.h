// The slow paths behind the allocation hooks' fast paths (hooks.cc): taken when a thread's
// countdown expires or a freed block may be sampled. Each runs for a small fraction of
// allocations, so it may lock the recorder briefly; none calls malloc for itself. Not
// async-signal-safe, like the functions they serve.
//
//   malloc ─fast─▶ __libc_malloc
//          └countdown expired─▶ AllocateSlow ─▶ real allocation, CaptureStack, HeapRecorder::Record
//   free   ─untagged─▶ __libc_free
//          └tagged (sampled)─▶ ReleaseSampled ─▶ HeapRecorder::Forget, then FreeTagged
//   (tagged_blocks.h; with an allocator other than glibc, the recorder's filter decides instead)
#pragma once

#include <cstddef>

#include "preload/alloc/real_allocator.h"

namespace heaprec::preload {

// The countdown expired for an allocation of `size` bytes: performs the real allocation
// (`alignment` for kMemalign) and records it if it is sampled. May lock briefly.
void* AllocateSlow(AllocKind kind, std::size_t size, std::size_t alignment);

// posix_memalign's slow path (it returns its block through `out`).
int PosixMemalignSlow(void** out, std::size_t alignment, std::size_t size);

// realloc of a block that may be sampled, or whose countdown `expired`: the bookkeeping a moved or
// resized sampled block needs. May lock.
void* ReallocSlow(void* old_block, std::size_t size, bool expired);

// free() of a block that may be sampled (tagged, or the filter said maybe): forgets it, then gives
// it back to the allocator; or, when the thread is inside heaprec (see HookGuard), defers both
// until it leaves. Out of line, so that free()'s fast path needs no stack frame. May lock.
void ReleaseSampled(void* block);

}  // namespace heaprec::preload
