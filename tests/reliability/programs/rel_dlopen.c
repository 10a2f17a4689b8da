/* dlopen/dlclose of a library that allocates: blocks allocated by the library's code stay live
 * after it is unloaded (some freed after dlclose, some kept to the end).
 *
 *   rel_dlopen MODULE_PATH [CYCLES]    (default 20 cycles)
 *
 * Each cycle: dlopen(MODULE), 5 x rel_dlmod_keep(3000) kept live until exit, 5 x
 * rel_dlmod_temp(4000), dlclose, then the 5 temporary blocks are freed. Also exercises the dynamic
 * loader's own allocations (dlerror after a failed dlopen). Exact-mode answer: blocks from
 * rel_dlmod_keep live CYCLES x 5 x 3000 bytes; from rel_dlmod_temp live 0. Prints one line. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  if (argc < 2) return 64;
  int cycles = argc > 2 ? atoi(argv[2]) : 20;
  void** kept = calloc((size_t)cycles * 5, sizeof(void*));
  long kept_bytes = 0;
  for (int c = 0; c < cycles; ++c) {
    void* handle = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
      fprintf(stderr, "dlopen: %s\n", dlerror());
      return 1;
    }
    void* (*keep)(size_t) = (void* (*)(size_t))dlsym(handle, "rel_dlmod_keep");
    void* (*temp)(size_t) = (void* (*)(size_t))dlsym(handle, "rel_dlmod_temp");
    if (keep == NULL || temp == NULL) return 1;
    void* temporary[5];
    for (int i = 0; i < 5; ++i) {
      kept[c * 5 + i] = keep(3000);
      temporary[i] = temp(4000);
      if (kept[c * 5 + i] == NULL || temporary[i] == NULL) return 1;
      kept_bytes += 3000;
    }
    if (dlclose(handle) != 0) return 1;
    for (int i = 0; i < 5; ++i) free(temporary[i]);
  }
  /* The loader allocates the error message; the next dlerror frees it. */
  if (dlopen("librel-no-such-library.so", RTLD_NOW) != NULL) return 1;
  const char* message = dlerror();
  printf("dlerror: %s\n", message != NULL ? message : "(none)");
  printf("cycles=%d kept=%ld\n", cycles, kept_bytes);
  return 0;
}
