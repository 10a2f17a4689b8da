// The reference floor for heaprec's hot paths: a do-nothing LD_PRELOAD interposer.
//
// It replaces every allocator entry point libheaprec.so replaces (the C functions and the C++
// operators new and delete) and forwards each one straight to glibc's __libc_* functions, doing
// nothing else. Whatever a program pays under it is the price of interposition itself: the extra
// PLT jump, a call that can no longer be inlined into libstdc++'s operator new, and the symbol
// lookups at start-up. heaprec's overhead is reported against this floor as well as against
// glibc alone (bench/hot_paths.py, docs/benchmarks.md).
//
// Not part of heaprec: built only with the benchmarks, never installed. Like libheaprec.so it is
// linked as C, without libstdc++, so C programs pay nothing for a runtime they do not use; a failed
// throwing operator new therefore aborts instead of throwing (the benchmarks never run out of
// memory).
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include <cstddef>
#include <new>

extern "C" {
void* __libc_malloc(std::size_t size);
void __libc_free(void* p);
void* __libc_calloc(std::size_t count, std::size_t size);
void* __libc_realloc(void* p, std::size_t size);
void* __libc_memalign(std::size_t alignment, std::size_t size);
void* __libc_valloc(std::size_t size);
void* __libc_pvalloc(std::size_t size);
}

#define FLOOR_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

void* NewOrThrow(std::size_t size, std::size_t alignment, bool nothrow) {
  void* p = alignment == 0 ? __libc_malloc(size) : __libc_memalign(alignment, size);
  if (p == nullptr && !nothrow) abort();
  return p;
}

}  // namespace

FLOOR_EXPORT void* malloc(std::size_t size) { return __libc_malloc(size); }
FLOOR_EXPORT void free(void* p) { __libc_free(p); }
FLOOR_EXPORT void* calloc(std::size_t count, std::size_t size) {
  return __libc_calloc(count, size);
}
FLOOR_EXPORT void* realloc(void* p, std::size_t size) { return __libc_realloc(p, size); }
FLOOR_EXPORT void* reallocarray(void* p, std::size_t count, std::size_t size) {
  std::size_t bytes;
  if (__builtin_mul_overflow(count, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return __libc_realloc(p, bytes);
}
FLOOR_EXPORT int posix_memalign(void** out, std::size_t alignment, std::size_t size) {
  if (alignment == 0 || alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0) {
    return EINVAL;
  }
  void* p = __libc_memalign(alignment, size);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}
FLOOR_EXPORT void* aligned_alloc(std::size_t alignment, std::size_t size) {
  return __libc_memalign(alignment, size);
}
FLOOR_EXPORT void* memalign(std::size_t alignment, std::size_t size) {
  return __libc_memalign(alignment, size);
}
FLOOR_EXPORT void* valloc(std::size_t size) { return __libc_valloc(size); }
FLOOR_EXPORT void* pvalloc(std::size_t size) { return __libc_pvalloc(size); }

#define FLOOR_ALIGN(a) static_cast<std::size_t>(a)
void* operator new(std::size_t n) { return NewOrThrow(n, 0, false); }
void* operator new[](std::size_t n) { return NewOrThrow(n, 0, false); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return NewOrThrow(n, 0, true); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return NewOrThrow(n, 0, true);
}
void* operator new(std::size_t n, std::align_val_t a) {
  return NewOrThrow(n, FLOOR_ALIGN(a), false);
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return NewOrThrow(n, FLOOR_ALIGN(a), false);
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return NewOrThrow(n, FLOOR_ALIGN(a), true);
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return NewOrThrow(n, FLOOR_ALIGN(a), true);
}
void operator delete(void* p) noexcept { __libc_free(p); }
void operator delete[](void* p) noexcept { __libc_free(p); }
void operator delete(void* p, std::size_t) noexcept { __libc_free(p); }
void operator delete[](void* p, std::size_t) noexcept { __libc_free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { __libc_free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { __libc_free(p); }
void operator delete(void* p, std::align_val_t) noexcept { __libc_free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { __libc_free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { __libc_free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { __libc_free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { __libc_free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  __libc_free(p);
}
