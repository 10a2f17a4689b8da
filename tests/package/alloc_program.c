/* The program the package test profiles with the installed heaprec: 64 blocks of 64 KiB held
 * until exit by one named function. With -DUSE_API it also links -lheaprec (pkg-config heaprec)
 * and writes a profile of its own through the C API, to the path given as its argument. */
#include <stdlib.h>
#include <string.h>
#ifdef USE_API
#include <heaprec/heaprec.h>
#endif

static void* held[64];

__attribute__((noinline)) void package_test_allocate(void) {
  for (int i = 0; i < 64; ++i) {
    held[i] = malloc(64 << 10);
    memset(held[i], i, 64 << 10);
  }
}

int main(int argc, char** argv) {
  package_test_allocate();
#ifdef USE_API
  if (argc < 2 || heaprec_dump(argv[1]) != 0) return 1;
#else
  (void)argc;
  (void)argv;
#endif
  return 0;
}
