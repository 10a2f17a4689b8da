// A PIE whose _start (crt1.o, no debug info of its own) lies under the debug info of the copy of
// Churn the linker discarded (discarded_copy.h): this unit, built with other options than
// discarded_copy_kept.cc, holds main, which -O2 puts in .text.startup, just before _start, so that
// libdwfl attributes _start to this unit. It prints an address inside Churn, one inside _start, and
// its executable mappings, for symbolizer_test.cc.
#include <cinttypes>
#include <cstdint>
#include <cstdio>

#include "discarded_copy.h"
#include "executable_mappings.h"

extern "C" void _start();
void ChurnFirst(volatile unsigned long* sink);

int main() {
  volatile unsigned long sink[64] = {1};
  ChurnFirst(sink);
  std::printf("build %" PRIxPTR " 0 0\n", reinterpret_cast<uintptr_t>(&Churn) + 16);
  std::printf("inlined %" PRIxPTR " 0 0\n", reinterpret_cast<uintptr_t>(&_start) + 4);
  PrintExecutableMappings();
  return sink[1] == 42 ? 1 : 0;
}
