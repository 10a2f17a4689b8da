// What operator new does when the allocator returns null, without linking libstdc++
// (new_failure.h).
#include "preload/alloc/new_failure.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "preload/alloc/real_allocator.h"

namespace heaprec::preload {
namespace {

using NewHandler = void (*)();
using GetNewHandlerFn = NewHandler (*)();
using ThrowBadAllocFn = void (*)();

void* RetryAllocation(std::size_t size, std::size_t alignment) {
  return alignment == 0 ? g_real.malloc(size) : g_real.memalign(alignment, size);
}

}  // namespace

// The standard's loop: call the installed new-handler and retry until it succeeds; with no handler,
// throw std::bad_alloc (or return null for the nothrow forms). Both std::get_new_handler and the
// thrower are found in the program's libstdc++ by name; when they cannot be found the program
// cannot have a handler installed, and aborting is what an uncaught bad_alloc would do.
void* HandleNewFailure(std::size_t size, std::size_t alignment, bool nothrow) {
  auto get_handler =
      reinterpret_cast<GetNewHandlerFn>(dlsym(RTLD_DEFAULT, "_ZSt15get_new_handlerv"));
  for (;;) {
    NewHandler handler = get_handler != nullptr ? get_handler() : nullptr;
    if (handler == nullptr) break;
    handler();  // may throw: this frame has unwind tables, so the exception passes through
    if (void* block = RetryAllocation(size, alignment)) return block;
  }
  if (nothrow) return nullptr;
  auto throw_bad_alloc =
      reinterpret_cast<ThrowBadAllocFn>(dlsym(RTLD_DEFAULT, "_ZSt17__throw_bad_allocv"));
  if (throw_bad_alloc != nullptr) throw_bad_alloc();
  static const char kMessage[] = "heaprec: operator new failed and std::bad_alloc is unavailable\n";
  ssize_t ignored = write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
  (void)ignored;
  abort();
}

}  // namespace heaprec::preload
