// Built statically (and as static-pie): a program LD_PRELOAD cannot reach, which `heaprec run`
// must still run, saying that it runs unprofiled.
#include <stdio.h>

int main(void) {
  printf("static program\n");
  return 4;
}
