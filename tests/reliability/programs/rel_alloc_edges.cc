// The allocator's edge cases, each printed with its result (null or not, errno, alignment), so
// that an unprofiled and a profiled run of this program can be compared line by line.
//
//   rel_alloc_edges
//
// Covers: malloc(0), free(NULL), realloc(NULL, n), realloc(p, 0), calloc overflow, huge requests
// that fail with ENOMEM (malloc, calloc, realloc, aligned_alloc, posix_memalign, memalign, valloc,
// pvalloc, reallocarray overflow, operator new nothrow, operator new throwing std::bad_alloc),
// invalid alignments (posix_memalign 0, 3, 24; aligned_alloc 3; memalign 3), posix_memalign
// leaving its out pointer untouched on error, malloc_usable_size >= the request, and errno left
// alone by successful calls and by free. Exits 0.
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <iterator>
#include <new>

namespace {

__attribute__((noinline)) void* Opaque(void* p) {
  __asm__ volatile("" : "+r"(p)::"memory");
  return p;
}

// Sizes the compiler cannot see, so that no call is folded or elided.
__attribute__((noinline)) size_t Size(size_t n) {
  __asm__ volatile("" : "+r"(n));
  return n;
}

constexpr uintptr_t kSentinel = 0x5eed5eed;

void Show(const char* what, void* p, int error, size_t alignment = 0) {
  printf("%-40s %s errno=%s", what, p != nullptr ? "ptr" : "null",
         error == 0 ? "0" : strerrorname_np(error));
  if (p != nullptr && alignment != 0) {
    printf(" aligned=%s", reinterpret_cast<uintptr_t>(p) % alignment == 0 ? "yes" : "no");
  }
  printf("\n");
}

// errno is set to a marker first: a successful call must leave it alone, a failing one sets it.
#define CALL(expression, what, alignment)  \
  do {                                     \
    errno = 0;                             \
    void* result_ = Opaque((expression));  \
    Show(what, result_, errno, alignment); \
    free(result_);                         \
  } while (0)

void PosixMemalign(size_t alignment, size_t size, const char* what) {
  void* out = reinterpret_cast<void*>(kSentinel);
  errno = 0;
  int rc = posix_memalign(&out, alignment, size);
  int error = errno;
  printf("%-40s rc=%s errno=%s out=%s", what, rc == 0 ? "0" : strerrorname_np(rc),
         error == 0 ? "0" : strerrorname_np(error),
         out == reinterpret_cast<void*>(kSentinel) ? "untouched" : "set");
  if (rc == 0) {
    printf(" aligned=%s", reinterpret_cast<uintptr_t>(out) % alignment == 0 ? "yes" : "no");
    free(out);
  }
  printf("\n");
}

}  // namespace

int main() {
  const size_t huge = Size(SIZE_MAX - 4096);
  const size_t half = Size(SIZE_MAX / 2);

  CALL(malloc(Size(0)), "malloc(0)", 16);
  errno = 77;
  free(Opaque(nullptr));
  printf("%-40s errno=%d\n", "free(NULL)", errno);
  CALL(realloc(nullptr, Size(100)), "realloc(NULL, 100)", 16);
  {
    void* p = Opaque(malloc(Size(200)));
    errno = 0;
    void* q = Opaque(realloc(p, Size(0)));
    Show("realloc(p, 0)", q, errno);
    free(q);
  }
  CALL(calloc(half, Size(3)), "calloc(SIZE_MAX/2, 3)", 0);
  CALL(calloc(Size(1), huge), "calloc(1, huge)", 0);
  CALL(malloc(huge), "malloc(huge)", 0);
  CALL(malloc(half), "malloc(SIZE_MAX/2)", 0);
  {
    void* p = Opaque(malloc(Size(300)));
    memset(p, 7, 300);
    // Read back through a pointer the compiler cannot tie to p: a failed realloc keeps the block.
    auto* old = static_cast<unsigned char*>(Opaque(p));
    errno = 0;
    void* q = Opaque(realloc(p, huge));
    Show("realloc(p, huge)", q, errno);
    printf("%-40s %s\n", "  old block after failed realloc", old[299] == 7 ? "intact" : "changed");
    free(q != nullptr ? q : old);
  }
  CALL(reallocarray(nullptr, half, Size(3)), "reallocarray(NULL, SIZE_MAX/2, 3)", 0);
  CALL(reallocarray(nullptr, Size(10), Size(30)), "reallocarray(NULL, 10, 30)", 16);
  CALL(aligned_alloc(Size(64), huge), "aligned_alloc(64, huge)", 0);
  CALL(aligned_alloc(Size(64), Size(640)), "aligned_alloc(64, 640)", 64);
  CALL(aligned_alloc(Size(3), Size(64)), "aligned_alloc(3, 64)", 0);
  CALL(aligned_alloc(Size(0), Size(64)), "aligned_alloc(0, 64)", 0);
  CALL(memalign(Size(64), huge), "memalign(64, huge)", 0);
  CALL(memalign(Size(3), Size(64)), "memalign(3, 64)", 4);
  CALL(memalign(Size(4096), Size(100)), "memalign(4096, 100)", 4096);
  CALL(memalign(half + 2, Size(64)), "memalign(SIZE_MAX/2+2, 64)", 0);
  CALL(valloc(huge), "valloc(huge)", 0);
  CALL(valloc(Size(100)), "valloc(100)", 4096);
  CALL(pvalloc(huge), "pvalloc(huge)", 0);
  CALL(pvalloc(Size(100)), "pvalloc(100)", 4096);
  PosixMemalign(64, huge, "posix_memalign(64, huge)");
  PosixMemalign(0, 64, "posix_memalign(0, 64)");
  PosixMemalign(3, 64, "posix_memalign(3, 64)");
  PosixMemalign(24, 64, "posix_memalign(24, 64)");
  PosixMemalign(64, 0, "posix_memalign(64, 0)");
  PosixMemalign(256, 1000, "posix_memalign(256, 1000)");

  {
    errno = 0;
    void* p = Opaque(::operator new(huge, std::nothrow));
    Show("operator new(huge, nothrow)", p, 0);
    p = Opaque(::operator new[](huge, std::nothrow));
    Show("operator new[](huge, nothrow)", p, 0);
    p = Opaque(::operator new(huge, std::align_val_t(64), std::nothrow));
    Show("operator new(huge, align 64, nothrow)", p, 0);
  }
  for (int variant = 0; variant < 3; ++variant) {
    const char* names[] = {"operator new(huge)", "operator new[](huge)",
                           "operator new(huge, align 64)"};
    try {
      void* p = variant == 0   ? ::operator new(huge)
                : variant == 1 ? ::operator new[](huge)
                               : ::operator new(huge, std::align_val_t(64));
      printf("%-40s returned %s\n", names[variant], p != nullptr ? "ptr" : "null");
    } catch (const std::bad_alloc& e) {
      printf("%-40s threw %s\n", names[variant], e.what());
    }
  }

  const size_t sizes[] = {0, 1, 24, 25, 100, 1000, 4096, 100000, 1 << 20};
  int usable_ok = 0;
  for (size_t n : sizes) {
    void* p = Opaque(malloc(Size(n)));
    usable_ok += p != nullptr && malloc_usable_size(p) >= n;
    free(p);
    void* a = Opaque(aligned_alloc(64, Size(n)));
    usable_ok += a != nullptr && malloc_usable_size(a) >= n;
    free(a);
  }
  printf("%-40s %d of %zu\n", "malloc_usable_size >= request", usable_ok, 2 * std::size(sizes));
  printf("%-40s %zu\n", "malloc_usable_size(NULL)", malloc_usable_size(nullptr));

  // errno across successful calls (each of which heaprec samples in exact mode) and frees.
  int kept = 0;
  for (int i = 0; i < 1000; ++i) {
    errno = 4242;
    void* p = Opaque(malloc(Size(static_cast<size_t>(i) * 7 + 1)));
    kept += errno == 4242;
    errno = 4343;
    free(p);
    kept += errno == 4343;
  }
  printf("%-40s %d of 2000\n", "errno kept by malloc and free", kept);
  return 0;
}
