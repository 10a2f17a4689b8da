/* The public API: heaprec_dump() in the middle of the run sees the live set of that moment.
 *
 *   wl_api DUMP_PATH [N]   (default N 100)
 *
 * Phase 1: N x 1000 bytes at site_api_phase1. heaprec_dump(DUMP_PATH). Then all phase-1 objects
 * are freed and N x 2000 bytes allocated at site_api_phase2.
 * Mid-run dump: site_api_phase1 N x 1000, no site_api_phase2.
 * Exit profile: site_api_phase1 live 0 (allocated N x 1000), site_api_phase2 N x 2000.
 * Prints the dump's return value. */
#include <stdio.h>
#include <stdlib.h>

#include "heaprec/heaprec.h"
#include "wl_common.h"

static void** g_phase1;
static void** g_phase2;

__attribute__((noinline)) void site_api_phase1(long n) {
  for (long i = 0; i < n; ++i) g_phase1[i] = wl_opaque(wl_check(malloc(1000)));
}

__attribute__((noinline)) void site_api_phase2(long n) {
  for (long i = 0; i < n; ++i) g_phase2[i] = wl_opaque(wl_check(malloc(2000)));
}

int main(int argc, char** argv) {
  if (argc < 2) return 64;
  long n = wl_arg(argc, argv, 2, 100);
  g_phase1 = wl_slots(n);
  g_phase2 = wl_slots(n);
  site_api_phase1(n);
  int rc = heaprec_dump(argv[1]);
  for (long i = 0; i < n; ++i) free(wl_opaque(g_phase1[i]));
  site_api_phase2(n);
  printf("active=%d dump=%d\n", heaprec_is_active(), rc);
  return rc == 0 ? 0 : 1;
}
