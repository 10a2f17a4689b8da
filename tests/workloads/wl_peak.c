/* A heap whose peak comes in the middle of the run.
 *
 *   wl_peak [COUNT]     (default 20000)
 *
 * Site               objects            size     live at exit
 * site_peak_build    COUNT              1000     none: all freed before the end
 * site_after_peak    COUNT/10           1000     all
 *
 * So the peak (COUNT x 1000 bytes) holds site_peak_build, and the end holds only site_after_peak.
 */
#include <stdio.h>
#include <stdlib.h>

#include "wl_common.h"

__attribute__((noinline)) void site_peak_build(void** slots, long count) {
  for (long i = 0; i < count; ++i) slots[i] = wl_opaque(wl_check(malloc(1000)));
}

__attribute__((noinline)) void site_after_peak(void** slots, long count) {
  for (long i = 0; i < count; ++i) slots[i] = wl_opaque(wl_check(malloc(1000)));
}

int main(int argc, char** argv) {
  long count = wl_arg(argc, argv, 1, 20000);
  void** slots = wl_slots(count);
  site_peak_build(slots, count);
  for (long i = 0; i < count; ++i) free(wl_opaque(slots[i]));
  site_after_peak(slots, count / 10);
  printf("peak count=%ld\n", count);
  return 0;
}
