// Helpers shared by the reliability test programs (C).
#pragma once

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

// Hides a pointer from the optimizer, so that an allocation whose block is never read still
// happens.
__attribute__((noinline, unused)) static void* opaque(void* p) {
  __asm__ volatile("" : "+r"(p)::"memory");
  return p;
}

// Ends the program loudly when an allocation fails: the scenarios never expect one to.
__attribute__((unused)) static void* checked(void* p) {
  if (p == NULL) {
    fprintf(stderr, "allocation failed\n");
    abort();
  }
  return p;
}

// A small deterministic generator (fixed seeds make runs repeatable).
__attribute__((unused)) static uint32_t next_random(uint32_t* state) {
  *state = *state * 1103515245u + 12345u;
  return *state >> 8;
}
