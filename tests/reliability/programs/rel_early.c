/* A shared library linked into rel_lifecycle (DT_NEEDED), so it is initialized before
 * libheaprec.so when heaprec is preloaded: its constructor (priority 101) allocates before
 * heaprec has started, and its destructor frees those blocks after heaprec wrote the final
 * profile (libraries are finalized in the reverse order of their initialization). */
#include <stdlib.h>
#include <string.h>

static char* g_early_text;
static void* g_early_blocks[16];

__attribute__((constructor(101))) static void rel_early_init(void) {
  g_early_text = malloc(64);
  if (g_early_text != NULL) strcpy(g_early_text, "allocated before main");
  for (int i = 0; i < 16; ++i) g_early_blocks[i] = malloc(1000 + (size_t)i);
}

__attribute__((destructor(101))) static void rel_early_fini(void) {
  for (int i = 0; i < 16; ++i) free(g_early_blocks[i]);
  free(g_early_text);
}

__attribute__((visibility("default"))) const char* rel_early_text(void) { return g_early_text; }

/* Frees half of the early blocks from the program, while heaprec is running. */
__attribute__((visibility("default"))) void rel_early_free_some(void) {
  for (int i = 0; i < 16; i += 2) {
    free(g_early_blocks[i]);
    g_early_blocks[i] = NULL;
  }
}
