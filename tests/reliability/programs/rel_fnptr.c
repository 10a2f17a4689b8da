/* A non-PIE program that passes the allocator functions around as function pointers. The linker
 * then gives malloc, free, realloc and posix_memalign canonical PLT entries in the executable
 * (undefined dynamic symbols with a non-zero value), so dlsym(RTLD_DEFAULT, "malloc") returns an
 * address inside the executable, although the executable defines no allocator (python3 on Debian
 * is built like this).
 *
 *   rel_fnptr
 *
 * Exact-mode answer: site_fnptr_keep holds 100 x 1000 bytes. Prints one line; exits 0. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static void* call_malloc(void* (*f)(size_t), size_t n) { return f(n); }
__attribute__((noinline)) static void call_free(void (*f)(void*), void* p) { f(p); }
__attribute__((noinline)) static void* call_realloc(void* (*f)(void*, size_t), void* p, size_t n) {
  return f(p, n);
}
__attribute__((noinline)) static int call_posix_memalign(int (*f)(void**, size_t, size_t),
                                                         void** out) {
  return f(out, 64, 100);
}

__attribute__((noinline)) void site_fnptr_keep(void** slots) {
  for (int i = 0; i < 100; ++i) slots[i] = call_malloc(malloc, 1000);
}

int main(void) {
  static void* kept[100];
  int ok = 0;
  for (int i = 0; i < 1000; ++i) {
    void* p = call_malloc(malloc, 100 + (size_t)i);
    p = call_realloc(realloc, p, 200 + (size_t)i);
    ok += p != NULL;
    call_free(free, p);
    void* q = NULL;
    if (call_posix_memalign(posix_memalign, &q) == 0) {
      ++ok;
      call_free(free, q);
    }
  }
  site_fnptr_keep(kept);
  printf("fnptr ok=%d\n", ok);
  return ok == 2000 ? 0 : 1;
}
