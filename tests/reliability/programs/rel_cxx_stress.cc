// C++ under load: exceptions thrown and caught at a high rate (each throw allocates its exception
// object through malloc, and unwinds through libgcc), and allocations 2000 frames deep.
//
//   rel_cxx_stress throw N     throws and catches N std::runtime_error with a non-small message
//   rel_cxx_stress deep DEPTH  recursion DEPTH frames deep through site_deep_frame, then 100
//                              blocks of 1000 bytes at site_deep_leaf, kept live
//
// Prints one deterministic line; exits 0.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace {

__attribute__((noinline)) void* Opaque(void* p) {
  __asm__ volatile("" : "+r"(p)::"memory");
  return p;
}

__attribute__((noinline)) void Thrower(long i) {
  throw std::runtime_error("failure number " + std::to_string(i) + " of a long-enough message");
}

}  // namespace

extern "C" __attribute__((noinline)) void site_deep_leaf() {
  for (int i = 0; i < 100; ++i) Opaque(malloc(1000));
}

// Not a tail call: the frame stays on the stack.
extern "C" __attribute__((noinline)) long site_deep_frame(long depth) {
  if (depth <= 1) {
    site_deep_leaf();
    return 1;
  }
  long below = site_deep_frame(depth - 1);
  __asm__ volatile("" : "+r"(below));
  return below + 1;
}

int main(int argc, char** argv) {
  if (argc < 3) return 64;
  const long n = atol(argv[2]);
  if (strcmp(argv[1], "throw") == 0) {
    long caught = 0, length = 0;
    for (long i = 0; i < n; ++i) {
      try {
        Thrower(i);
      } catch (const std::runtime_error& e) {
        ++caught;
        length += static_cast<long>(strlen(e.what()));
      }
    }
    printf("thrown=%ld caught=%ld message_bytes=%ld\n", n, caught, length);
    return caught == n ? 0 : 1;
  }
  if (strcmp(argv[1], "deep") == 0) {
    printf("depth=%ld\n", site_deep_frame(n));
    return 0;
  }
  return 64;
}
