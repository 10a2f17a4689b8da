// The program symbolize_e2e_test.cc profiles and then symbolizes from its separate debug file:
// built with -g and a build id, then split and stripped as distributions ship programs
// (tests/cli/CMakeLists.txt). Two allocation sites in functions of its own; it prints each site's
// function and allocating line ("site NAME LINE"), which the symbolized profile must name.
//
// usage: wl_stripped [ROUNDS [MILLISECONDS]]: ROUNDS rounds (default 1), each keeping a 64 KiB
// buffer and a name, MILLISECONDS apart (default 0), so that --dump-interval profiles see growth.
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int keep_line, name_line;

__attribute__((noinline)) void* keep_buffer(size_t size) {
  void* buffer = malloc(size);
  keep_line = __LINE__ - 1;
  return buffer;
}

__attribute__((noinline)) char* make_name(int round) {
  char* name = malloc(32);
  name_line = __LINE__ - 1;
  if (name != NULL) snprintf(name, 32, "round-%d", round);
  return name;
}

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 1;
  long ms = argc > 2 ? atol(argv[2]) : 0;
  static void* kept[1024];
  if (rounds < 1 || rounds > 512) return 2;
  for (int i = 0; i < rounds; ++i) {
    kept[2 * i] = keep_buffer(64 * 1024);
    kept[2 * i + 1] = make_name(i);
    struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};
    if (ms > 0) nanosleep(&pause, NULL);
  }
#ifdef WL_REBUILT
  printf("rebuilt\n");  // another build of the program: other code, another build id
#endif
  printf("site keep_buffer %d\nsite make_name %d\n", keep_line, name_line);
  return kept[0] != NULL ? 0 : 1;
}
