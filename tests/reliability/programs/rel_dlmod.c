/* A shared library loaded with dlopen by rel_dlopen (built as a CMake MODULE): its functions
 * allocate blocks that outlive the library. Its constructor allocates a block that its destructor
 * frees, so loading and unloading it allocates and frees as well. */
#include <stdlib.h>
#include <string.h>

static void* g_own;

__attribute__((constructor)) static void rel_dlmod_init(void) { g_own = malloc(333); }
__attribute__((destructor)) static void rel_dlmod_fini(void) { free(g_own); }

__attribute__((noinline)) static void* opaque(void* p) {
  __asm__ volatile("" : "+r"(p)::"memory");
  return p;
}

/* Blocks the program keeps after dlclose, until it exits. */
__attribute__((noinline, visibility("default"))) void* rel_dlmod_keep(size_t size) {
  void* p = opaque(malloc(size));
  if (p != NULL) memset(p, 0x5a, size);
  return p;
}

/* Blocks the program frees only after dlclose. */
__attribute__((noinline, visibility("default"))) void* rel_dlmod_temp(size_t size) {
  return opaque(calloc(1, size));
}
