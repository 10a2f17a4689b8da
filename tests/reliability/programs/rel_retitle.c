/* A program that rewrites its process title over its command line, as nginx and redis do
 * (tests/reliability/own_files_test.cc).
 *
 *   rel_retitle PADDING...
 *     holds 8 MiB at site_retitled, then writes a title as long as its whole argv area
 *     ("worker process: ..." with spaces and slashes) over argv[0] and the arguments after it, and
 *     exits 0. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "rel_common.h"

enum { kBlock = 64 * 1024, kBlocks = 128 };

static void* g_blocks[kBlocks];

__attribute__((noinline)) void site_retitled(void) {
  for (int i = 0; i < kBlocks; ++i) g_blocks[i] = opaque(checked(malloc(kBlock)));
}

int main(int argc, char** argv) {
  site_retitled();
  char* start = argv[0];
  char* end = argv[argc - 1] + strlen(argv[argc - 1]);  // the arguments are contiguous
  const char title[] = "worker process: /srv/app --listen 0.0.0.0:80 ";
  for (char* p = start; p < end; ++p) *p = title[(p - start) % (sizeof(title) - 1)];
  *end = '\0';
  for (int i = 0; i < kBlocks; ++i) free(g_blocks[i]);
  return 0;
}
