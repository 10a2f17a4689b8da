// Program symbolized by the symbolizer tests. It prints, for known call instructions, the address
// heaprec would record (return address - 1) with the source lines the test must find, then its
// executable mappings from /proc/self/maps. Built with -g -O2.
#include <cinttypes>
#include <cstdint>
#include <cstdio>

#include "executable_mappings.h"

namespace ns {

// Prints the address inside the call instruction that called it, and the expected lines.
__attribute__((noinline)) void Record(const char* tag, int line, int outer_line) {
  uintptr_t pc = reinterpret_cast<uintptr_t>(__builtin_return_address(0)) - 1;
  std::printf("%s %" PRIxPTR " %d %d\n", tag, pc, line, outer_line);
}

class Widget {
 public:
  static int Build(int n);
};

// The test checks Function.start_line against this.
constexpr int kBuildDeclLine = __LINE__ + 1;
__attribute__((noinline)) int Widget::Build(int n) {
  Record("build", __LINE__, 0);
  return n + 1;  // work after the call keeps it from being a tail call
}

__attribute__((always_inline)) inline int Helper(int n, int outer_line) {
  Record("inlined", __LINE__, outer_line);
  return n * 2;
}

__attribute__((noinline)) int Outer(int n) { return Helper(n, __LINE__) + 1; }

}  // namespace ns

int main(int argc, char**) {
  volatile int seed = argc;  // opaque to the optimizer: no constant propagation into the callees
  int result = ns::Widget::Build(seed) + ns::Outer(seed);
  std::printf("decl %d\n", ns::kBuildDeclLine);
  PrintExecutableMappings();
  return result > 0 ? 0 : 1;
}
