// The interposed allocator entry points: the fast paths.
//
// Every allocation entry point is one expression around SampleCountdown(): subtract the
// allocation's size + 1 from the thread's byte countdown (initial-exec TLS) and, while it stays
// positive, tail-call glibc. No lock, no atomic read-modify-write, no call besides the allocator's
// own. Every release entry point asks the SampledKeyFilter (one load from a 64 KiB table) whether
// the block may be sampled and only then takes the slow path, before the block goes back to glibc
// (afterwards another thread could be handed the same address and sample it).
//
// All functions here: no locks and no allocation of their own on the fast path; the slow paths (in
// profiler.cc) may lock briefly. Not async-signal-safe, like the functions they replace.
// tests/preload/fast_path_test checks the fast paths' size in the disassembly.
#include <errno.h>
#include <stdint.h>

#include <cstddef>
#include <new>

#include "preload/profiler.h"
#include "preload/real_allocator.h"
#include "preload/thread_state.h"

#define HEAPREC_EXPORT extern "C" __attribute__((visibility("default")))
#define HEAPREC_LIKELY(x) __builtin_expect(!!(x), 1)
#define HEAPREC_UNLIKELY(x) __builtin_expect(!!(x), 0)

namespace heaprec::preload {
namespace {

// Counts an allocation of `size` bytes; true when a sample point falls inside it. Sizes are clamped
// so an absurd request (which will fail anyway) cannot wrap the countdown around.
inline bool SampleCountdown(std::size_t size) {
  constexpr std::size_t kMaxCost = std::size_t{1} << 62;
  std::size_t cost = size < kMaxCost ? size + 1 : kMaxCost;
  t_state.sampler.bytes_until_sample -= static_cast<std::int64_t>(cost);
  return HEAPREC_UNLIKELY(t_state.sampler.bytes_until_sample <= 0);
}

inline void Release(void* block) {
  if (block != nullptr) {
    HeapRecorder* recorder = g_recorder.load(std::memory_order_acquire);
    if (HEAPREC_UNLIKELY(recorder != nullptr &&
                         recorder->MaybeTracked(reinterpret_cast<std::uint64_t>(block)))) {
      if (!ForgetSlow(block)) return;  // deferred until this thread leaves heaprec
    }
  }
  g_real.free(block);
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
using heaprec::preload::Memalign;
using heaprec::preload::New;
using heaprec::preload::Release;
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

HEAPREC_EXPORT void* realloc(void* block, std::size_t size) {
  return heaprec::preload::ReallocTracked(block, size);
}

HEAPREC_EXPORT void* reallocarray(void* block, std::size_t count, std::size_t size) {
  std::size_t bytes;
  if (__builtin_mul_overflow(count, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return heaprec::preload::ReallocTracked(block, bytes);
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
