#include "preload/unwinder.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>

#include "preload/thread_state.h"

extern "C" const ElfW(Ehdr) __ehdr_start;  // this library's ELF header, defined by the linker

namespace heaprec::preload {
namespace {

using UnwBacktraceFn = int (*)(void**, int);
using UnwSetCachingPolicyFn = int (*)(void*, int);

UnwBacktraceFn g_unw_backtrace = nullptr;
std::uintptr_t g_self_text_low = 0, g_self_text_high = 0;

constexpr int kUnwCachePerThread = 2;  // UNW_CACHE_PER_THREAD in libunwind.h

// The executable range of heaprec itself, read from its own program headers, so that captures can
// drop the hook frames without relying on how many the compiler inlined.
void FindOwnTextRange() {
  const ElfW(Ehdr)* ehdr = &__ehdr_start;
  auto base = reinterpret_cast<std::uintptr_t>(ehdr);
  auto* phdrs = reinterpret_cast<const ElfW(Phdr)*>(base + ehdr->e_phoff);
  for (int i = 0; i < ehdr->e_phnum; ++i) {
    if (phdrs[i].p_type == PT_LOAD && (phdrs[i].p_flags & PF_X) != 0) {
      g_self_text_low = base + phdrs[i].p_vaddr;
      g_self_text_high = g_self_text_low + phdrs[i].p_memsz;
    }
  }
}

bool IsOwnFrame(std::uintptr_t pc) { return pc >= g_self_text_low && pc < g_self_text_high; }

void FindThreadStackBounds(ThreadState& t) {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
  void* low = nullptr;
  std::size_t size = 0;
  if (pthread_attr_getstack(&attr, &low, &size) == 0) {
    t.stack_low = reinterpret_cast<std::uintptr_t>(low);
    t.stack_high = t.stack_low + size;
  }
  pthread_attr_destroy(&attr);
}

// Walks the frame-pointer chain. heaprec itself is built with frame pointers, so the walk gets out
// of the hooks; whether it gets further depends on how the program was compiled.
int FramePointerBacktrace(void** out, int max) {
  ThreadState& t = t_state;
  if (t.stack_high == 0) FindThreadStackBounds(t);
  auto fp = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  std::uintptr_t low = fp, high = t.stack_high != 0 ? t.stack_high : fp + 64 * 1024;
  int n = 0;
  while (n < max) {
    if ((fp & (sizeof(void*) - 1)) != 0 || fp < low || fp + 2 * sizeof(void*) > high) break;
    auto* frame = reinterpret_cast<std::uintptr_t*>(fp);
    std::uintptr_t next = frame[0], ret = frame[1];
    if (ret == 0) break;
    out[n++] = reinterpret_cast<void*>(ret);
    if (next <= fp) break;
    low = fp;
    fp = next;
  }
  return n;
}

}  // namespace

void InitUnwinder(UnwindMethod method) {
  FindOwnTextRange();
  if (method != UnwindMethod::kLibunwind) return;
  void* handle = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return;
  auto backtrace = reinterpret_cast<UnwBacktraceFn>(dlsym(handle, "unw_backtrace"));
  auto set_caching =
      reinterpret_cast<UnwSetCachingPolicyFn>(dlsym(handle, "_ULx86_64_set_caching_policy"));
  void* address_space = dlsym(handle, "_ULx86_64_local_addr_space");
  if (backtrace == nullptr) return;
  if (set_caching != nullptr && address_space != nullptr) {
    set_caching(*static_cast<void**>(address_space), kUnwCachePerThread);
  }
  g_unw_backtrace = backtrace;
}

std::uint32_t CaptureStack(std::uint64_t* frames, std::uint32_t max_depth, bool* truncated) {
  // Capture into `frames` itself, which the caller sized max_depth + kCaptureExtraFrames.
  void** raw = reinterpret_cast<void**>(frames);
  int capacity = static_cast<int>(max_depth + kCaptureExtraFrames);
  int n = g_unw_backtrace != nullptr ? g_unw_backtrace(raw, capacity)
                                     : FramePointerBacktrace(raw, capacity);
  int first = 0;
  while (first < n && IsOwnFrame(reinterpret_cast<std::uintptr_t>(raw[first]))) ++first;
  std::uint32_t kept = static_cast<std::uint32_t>(n - first);
  *truncated = kept > max_depth || n == capacity;
  if (kept > max_depth) kept = max_depth;
  for (std::uint32_t i = 0; i < kept; ++i) {
    // Return address minus one: inside the call instruction, so it symbolizes to the calling line
    // (and, at a function's end, to the right function when the call was its last instruction).
    frames[i] = reinterpret_cast<std::uint64_t>(raw[first + i]) - 1;
  }
  return kept;
}

}  // namespace heaprec::preload
