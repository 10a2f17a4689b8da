// An executable with its allocator built in, as Chromium (PartitionAlloc) or a program linked with
// a static tcmalloc is: malloc, free, calloc and realloc defined here, a bump allocator over a
// static arena. The executable comes first in symbol lookup, before any preloaded library, so
// heaprec can never see an allocation: it must say exactly that, once, and change nothing else.
//
//   rel_own_malloc     allocates 1000 blocks through its own malloc, prints how many bytes it
//                      handed out, exits 0
#include <stdio.h>
#include <string.h>

static _Alignas(16) char g_arena[64 << 20];
static size_t g_used = 0;

void* malloc(size_t size) {
  size = (size + 15) & ~(size_t)15;
  if (size > sizeof(g_arena) - g_used) return NULL;
  void* block = g_arena + g_used;
  g_used += size;
  return block;
}
void free(void* block) { (void)block; }
void* calloc(size_t count, size_t size) {
  void* block = malloc(count * size);
  if (block != NULL) memset(block, 0, count * size);
  return block;
}
void* realloc(void* block, size_t size) {
  void* fresh = malloc(size);
  if (fresh != NULL && block != NULL) memcpy(fresh, block, size);  // bump: the old one is smaller
  return fresh;
}

int main(void) {
  for (int i = 0; i < 1000; ++i) {
    char* block = malloc(1000);
    memset(block, 1, 1000);
  }
  printf("own malloc handed out %zu bytes\n", g_used);
  return 0;
}
