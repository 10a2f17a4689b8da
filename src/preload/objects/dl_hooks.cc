// dlclose, interposed so that a library's code keeps its name in profiles after it is unloaded (see
// unloaded_libraries.h). Everything else about dlclose is the real one's: heaprec only looks at the
// library before and after.
#include <dlfcn.h>

#include "preload/export.h"
#include "preload/objects/unloaded_libraries.h"
#include "preload/process/next_symbol.h"
#include "preload/state.h"
#include "preload/thread_state.h"
#include "preload/unwind/unwinder.h"

namespace heaprec::preload {
namespace {

NextSymbol<int (*)(void*)> g_real_dlclose{"dlclose"};

}  // namespace
}  // namespace heaprec::preload

HEAPREC_EXPORT int dlclose(void* handle) {
  using namespace heaprec::preload;
  using heaprec::MemoryResource;
  auto real = g_real_dlclose.get();
  if (real == nullptr) return -1;
  MemoryResource* memory = ProfilerMemory();
  if (memory == nullptr) return real(handle);  // not profiling
  LoadedObject object;
  bool described;
  {
    HookGuard guard;
    described = DescribeLoadedObject(handle, &object);
  }
  // The library's destructors run inside the real dlclose: their frees are the program's.
  int result = real(handle);
  if (result == 0) ForgetUnwindRules();  // another object may now be loaded at its addresses
  if (described && result == 0) {
    HookGuard guard;
    if (!IsStillLoaded(object)) RememberUnloaded(object, *memory);
  }
  return result;
}
