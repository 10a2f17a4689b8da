// The interposed allocator entry points: the fast paths.
//
// Every allocation entry point is one expression around SampleCountdown(): subtract the
// allocation's size + 1 from the thread's byte countdown (initial-exec TLS; Sampler::Account, the
// core's countdown, inlined) and, while it stays positive, tail-call glibc. No lock, no atomic
// read-modify-write, no call besides the allocator's own. Every release entry point reads the word
// below the block, which glibc's free reads next anyway, to see whether it carries a sample's tag
// (tagged_blocks.h), and only then takes the slow path, before the block goes back to glibc
// (afterwards another thread could be handed the same address and sample it). Over another
// allocator the recorder's SampledKeyFilter answers instead.
//
// All functions here: no locks and no allocation of their own on the fast path; the slow paths (in
// slow_paths.h) may lock briefly. Not async-signal-safe, like the functions they replace.
#include <errno.h>
#include <stdint.h>

#include <cstddef>
#include <cstdint>
#include <new>

#include "core/sampler.h"
#include "preload/alloc/new_failure.h"
#include "preload/alloc/real_allocator.h"
#include "preload/alloc/slow_paths.h"
#include "preload/alloc/tagged_blocks.h"
#include "preload/export.h"
#include "preload/state.h"
#include "preload/thread_state.h"

#define HEAPREC_LIKELY(x) __builtin_expect(!!(x), 1)
#define HEAPREC_UNLIKELY(x) __builtin_expect(!!(x), 0)

namespace heaprec::preload {
namespace {

// Counts an allocation of `size` bytes on this thread's countdown; true when a sample point falls
// inside it (then the slow path draws the next point). Sampler::Account's arithmetic (the core's
// tests drive that one), written as the least it can be: one load of t_state's TLS offset, a `sub`
// of size + 1 from the countdown in place, a `jbe` on its borrow or zero. GCC compiles Account
// itself to four more instructions (it compares apart from the subtraction). The asm names t_state
// by its mangled symbol (heaprec::preload::t_state): renaming the variable is a link error here.
inline bool SampleCountdown(std::size_t size) {
  static_assert(
      offsetof(ThreadState, sampler) == 0 && offsetof(SamplerState, bytes_until_sample) == 0,
      "the countdown is the first word of t_state");
  asm goto(
      "movq _ZN7heaprec7preload7t_stateE@gottpoff(%%rip), %%rax\n\t"
      "subq %0, %%fs:(%%rax)\n\t"
      "jbe %l[sampled]"
      :
      : "r"(size + 1)
      : "rax", "cc", "memory"
      : sampled);
  return false;
sampled:
  return true;
}

// Whether `block` may be a sample: exactly (its tag) over glibc, by the filter over another
// allocator.
inline bool MaybeSampled(void* block) {
  if (block == nullptr) return false;
  if (HEAPREC_LIKELY(g_real.tagged_blocks())) return IsTagged(block);
  HeapRecorder* recorder = g_recorder.load(std::memory_order_acquire);
  return recorder != nullptr && recorder->MaybeTracked(reinterpret_cast<std::uint64_t>(block));
}

// free, delete: over glibc, one comparison (g_real.lowest_tagged) says the block is not null and
// its tag may be read, the tag test another, then the tail call; a null block, or any block of
// another allocator, takes the comparison's other branch.
__attribute__((noinline)) void ReleaseUntagged(void* block) {
  if (HEAPREC_UNLIKELY(MaybeSampled(block))) return ReleaseSampled(block);
  g_real.free(block);
}

inline void Release(void* block) {
  if (HEAPREC_LIKELY(reinterpret_cast<std::uintptr_t>(block) >= g_real.lowest_tagged)) {
    if (HEAPREC_UNLIKELY(IsTagged(block))) return ReleaseSampled(block);
    return g_real.free(block);
  }
  ReleaseUntagged(block);
}

// realloc(p, 0) frees p and allocates nothing: it does not count as an allocation.
inline void* Realloc(void* block, std::size_t size) {
  bool expired = (block == nullptr || size != 0) && SampleCountdown(size);
  if (HEAPREC_LIKELY(!expired && !MaybeSampled(block))) return g_real.realloc(block, size);
  return heaprec::preload::ReallocSlow(block, size, expired);
}

inline void* Memalign(std::size_t alignment, std::size_t size) {
  if (SampleCountdown(size)) return AllocateSlow(AllocKind::kMemalign, size, alignment);
  return g_real.memalign(alignment, size);
}

inline void* New(std::size_t size, std::size_t alignment, bool nothrow) {
  void* block;
  if (alignment == 0) {
    block = SampleCountdown(size) ? AllocateSlow(AllocKind::kMalloc, size, 0) : g_real.malloc(size);
  } else {
    block = Memalign(alignment, size);
  }
  if (HEAPREC_LIKELY(block != nullptr)) return block;
  return HandleNewFailure(size, alignment, nothrow);
}

}  // namespace
}  // namespace heaprec::preload

using heaprec::preload::AllocateSlow;
using heaprec::preload::AllocKind;
using heaprec::preload::g_real;
using heaprec::preload::IsTagged;
using heaprec::preload::Memalign;
using heaprec::preload::New;
using heaprec::preload::Realloc;
using heaprec::preload::Release;
using heaprec::preload::ReleaseSampled;
using heaprec::preload::SampleCountdown;

HEAPREC_EXPORT void* malloc(std::size_t size) {
  if (SampleCountdown(size)) return AllocateSlow(AllocKind::kMalloc, size, 0);
  return g_real.malloc(size);
}

HEAPREC_EXPORT void free(void* block) { Release(block); }

HEAPREC_EXPORT void* calloc(std::size_t count, std::size_t size) {
  std::size_t bytes;
  if (__builtin_mul_overflow(count, size, &bytes)) return g_real.calloc(count, size);  // ENOMEM
  if (SampleCountdown(bytes)) return AllocateSlow(AllocKind::kCalloc, bytes, 0);
  return g_real.calloc(count, size);
}

HEAPREC_EXPORT void* realloc(void* block, std::size_t size) { return Realloc(block, size); }

HEAPREC_EXPORT void* reallocarray(void* block, std::size_t count, std::size_t size) {
  std::size_t bytes;
  if (__builtin_mul_overflow(count, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return Realloc(block, bytes);
}

// A sampled block's usable size is the part the program sees (tagged_blocks.h).
HEAPREC_EXPORT std::size_t malloc_usable_size(void* block) {
  if (g_real.tagged_blocks() && block != nullptr && IsTagged(block)) {
    return heaprec::preload::TaggedUsableSize(block);
  }
  return g_real.usable_size(block);
}

// Argument checking (EINVAL for a bad alignment) is the real allocator's, so a profiled program
// sees exactly the errors it would see without heaprec.
HEAPREC_EXPORT int posix_memalign(void** out, std::size_t alignment, std::size_t size) {
  if (SampleCountdown(size)) return heaprec::preload::PosixMemalignSlow(out, alignment, size);
  return g_real.posix_memalign(out, alignment, size);
}

HEAPREC_EXPORT void* aligned_alloc(std::size_t alignment, std::size_t size) {
  if (SampleCountdown(size)) return AllocateSlow(AllocKind::kAlignedAlloc, size, alignment);
  return g_real.aligned_alloc(alignment, size);
}

// memalign accepts any alignment (glibc rounds it up to a power of two itself).
HEAPREC_EXPORT void* memalign(std::size_t alignment, std::size_t size) {
  return Memalign(alignment, size);
}

HEAPREC_EXPORT void* valloc(std::size_t size) {
  if (SampleCountdown(size)) return AllocateSlow(AllocKind::kValloc, size, 0);
  return g_real.valloc(size);
}

HEAPREC_EXPORT void* pvalloc(std::size_t size) {
  if (SampleCountdown(size)) return AllocateSlow(AllocKind::kPvalloc, size, 0);
  return g_real.pvalloc(size);
}

// C++ allocation functions. Replacing them (rather than letting libstdc++'s call malloc) saves a
// call and a frame on every allocation, and keeps libstdc++'s operator new out of every recorded
// stack.
#define HEAPREC_ALIGN(a) static_cast<std::size_t>(a)

void* operator new(std::size_t size) { return New(size, 0, false); }
void* operator new[](std::size_t size) { return New(size, 0, false); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return New(size, 0, true); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return New(size, 0, true);
}
void* operator new(std::size_t size, std::align_val_t a) {
  return New(size, HEAPREC_ALIGN(a), false);
}
void* operator new[](std::size_t size, std::align_val_t a) {
  return New(size, HEAPREC_ALIGN(a), false);
}
void* operator new(std::size_t size, std::align_val_t a, const std::nothrow_t&) noexcept {
  return New(size, HEAPREC_ALIGN(a), true);
}
void* operator new[](std::size_t size, std::align_val_t a, const std::nothrow_t&) noexcept {
  return New(size, HEAPREC_ALIGN(a), true);
}

void operator delete(void* p) noexcept { Release(p); }
void operator delete[](void* p) noexcept { Release(p); }
void operator delete(void* p, std::size_t) noexcept { Release(p); }
void operator delete[](void* p, std::size_t) noexcept { Release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { Release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { Release(p); }
void operator delete(void* p, std::align_val_t) noexcept { Release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { Release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { Release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { Release(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { Release(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { Release(p); }
