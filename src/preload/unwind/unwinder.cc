#include "preload/unwind/unwinder.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <unwind.h>

#include <atomic>
#include <cstring>

#include "preload/messages.h"
#include "preload/objects/own_image.h"
#include "preload/thread_state.h"
#include "preload/unwind/cfi_unwinder.h"
#include "preload/unwind/own_memory.h"

namespace heaprec::preload {
namespace {

using UnwindBacktraceFn = _Unwind_Reason_Code (*)(_Unwind_Trace_Fn, void*);
using UnwindGetIpFn = _Unwind_Ptr (*)(_Unwind_Context*);

// heaprec's own CFI walker (the default), its rule cache, and whether it is in use.
FrameRuleCache g_rule_cache;
bool g_use_cfi = false;
// "check": stacks are libgcc's, and every one is also walked by the CFI walker and compared.
bool g_check_cfi = false;
std::atomic<std::uint64_t> g_checked{0}, g_mismatched{0}, g_handed_over{0};
constexpr std::size_t kRuleCacheSlots = 1 << 13;  // 128 KiB: the rules of 8,192 return addresses
// Threads walking at once that each keep the last walk's rules (RuleMemo): 50 KiB.
constexpr std::size_t kRuleMemos = 64;

// libgcc's unwinder: the CFI walker's fallback, or the unwinder itself when asked for; null when
// heaprec walks frame pointers.
UnwindBacktraceFn g_unwind_backtrace = nullptr;
UnwindGetIpFn g_unwind_get_ip = nullptr;
// The executable range of heaprec itself, so that captures can drop the hook frames without
// relying on how many the compiler inlined.
AddressRange g_self_text;

bool IsOwnFrame(std::uintptr_t pc) { return g_self_text.Contains(pc); }

// Walks the frame-pointer chain. heaprec itself is built with frame pointers, so the walk gets out
// of the hooks; whether it gets further depends on how the program was compiled. Each frame must
// lie above the previous one, less than kMaxFrameBytes away, and be readable: the page the walk
// starts on is (it is this function's stack), each further page is checked once per walk.
int FramePointerBacktrace(void** out, int max) {
  constexpr std::uintptr_t kPage = 4096, kMaxFrameBytes = 1 << 20;
  auto fp = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  std::uintptr_t readable_low = fp & ~(kPage - 1), readable_high = readable_low + kPage;
  int n = 0;
  while (n < max) {
    if ((fp & (sizeof(void*) - 1)) != 0) break;
    std::uintptr_t frame_end = fp + 2 * sizeof(void*);
    if (fp < readable_low || frame_end > readable_high) {
      if (!IsReadable(fp, 2 * sizeof(void*))) break;
      readable_low = fp & ~(kPage - 1);
      readable_high = ((frame_end - 1) & ~(kPage - 1)) + kPage;
    }
    auto* frame = reinterpret_cast<std::uintptr_t*>(fp);
    std::uintptr_t next = frame[0], ret = frame[1];
    if (ret == 0) break;
    out[n++] = reinterpret_cast<void*>(ret);
    if (next <= fp || next - fp > kMaxFrameBytes) break;
    fp = next;
  }
  return n;
}

struct DwarfWalk {
  void** out;
  int count, capacity;
};

_Unwind_Reason_Code CollectFrame(_Unwind_Context* context, void* argument) {
  auto* walk = static_cast<DwarfWalk*>(argument);
  _Unwind_Ptr ip = g_unwind_get_ip(context);
  // The outermost frame (_start, a thread's clone) reports no return address.
  if (walk->count == walk->capacity || ip == 0) return _URC_END_OF_STACK;
  walk->out[walk->count++] = reinterpret_cast<void*>(ip);
  return _URC_NO_REASON;
}

// fork() safety. An unwinder may hold a lock of its own (libgcc's, for frames registered with
// __register_frame_info, as JIT compilers do) when another thread forks, and glibc does not reset
// it in the child. So the forking thread closes a gate first: unwinds already in flight are waited
// for (briefly: a thread inside the unwinder might itself wait for a lock another fork handler
// holds), new ones walk frame pointers until the fork is over, and a child born while an unwind was
// still in flight walks frame pointers for the rest of its life. Sequentially consistent on both
// sides, so either the unwinding thread sees the gate closed or the forking thread sees it counted.
std::atomic<int> g_unwinds_in_flight{0};
std::atomic<bool> g_fork_in_progress{false};
bool g_child_avoids_dwarf = false;  // set in ForkPrepare, applied in the child

int DwarfBacktrace(void** out, int max) {
  g_unwinds_in_flight.fetch_add(1);
  int n;
  if (g_fork_in_progress.load()) {
    n = FramePointerBacktrace(out, max);
  } else {
    DwarfWalk walk = {out, 0, max};
    g_unwind_backtrace(CollectFrame, &walk);
    n = walk.count;
  }
  g_unwinds_in_flight.fetch_sub(1);
  return n;
}

}  // namespace

// libgcc's entry points, found by LoadUnwinderLibrary and put to use by InitUnwinder.
namespace {
UnwindBacktraceFn g_loaded_backtrace = nullptr;
}  // namespace

void LoadUnwinderLibrary(UnwindMethod method) {
  g_self_text = OwnLoadedRange(PF_X);
  if (method == UnwindMethod::kFramePointers) return;
  // Already loaded as a dependency (src/preload/CMakeLists.txt): this finds it, and dlsym on the
  // handle is libgcc's own entry points even where another library exports _Unwind_* first.
  void* handle = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);
  auto backtrace = handle != nullptr
                       ? reinterpret_cast<UnwindBacktraceFn>(dlsym(handle, "_Unwind_Backtrace"))
                       : nullptr;
  auto get_ip =
      handle != nullptr ? reinterpret_cast<UnwindGetIpFn>(dlsym(handle, "_Unwind_GetIP")) : nullptr;
  if (backtrace == nullptr || get_ip == nullptr) {
    const char* parts[] = {
        "heaprec: libgcc_s.so.1 cannot be loaded (Debian package libgcc-s1); stacks ",
        method == UnwindMethod::kDwarf
            ? "that heaprec's own walker hands over (through signal handlers) "
            : "",
        "are walked by frame pointers and lose the callers of code built without them\n"};
    ReportMessage(parts, 3);
    return;
  }
  g_unwind_get_ip = get_ip;
  // The first walk initializes libgcc's register tables (under a pthread_once): here, at
  // start-up, rather than inside some thread's allocation.
  void* frames[4];
  DwarfWalk walk = {frames, 0, 4};
  backtrace(CollectFrame, &walk);
  g_loaded_backtrace = backtrace;
}

void InitUnwinder(UnwindMethod method, MemoryResource& memory) {
  if (method == UnwindMethod::kFramePointers) return;
#if defined(__x86_64__)
  if (method == UnwindMethod::kDwarf || method == UnwindMethod::kCheck) {
    std::size_t bytes = kRuleCacheSlots * FrameRuleCache::kSlotBytes;
    std::size_t memo_bytes = kRuleMemos * sizeof(RuleMemo);
    // Zeroed by the kernel: a short process touches only the pages of the rules it looks up.
    if (void* slots = memory.AllocateZeroed(bytes)) {
      // Without memos (no memory for them) walks go to the cache for every frame.
      void* memos = memory.AllocateZeroed(memo_bytes);
      g_rule_cache.Init(static_cast<FrameRuleCache::Slot*>(slots), kRuleCacheSlots,
                        static_cast<RuleMemo*>(memos), kRuleMemos);
      g_use_cfi = method == UnwindMethod::kDwarf;
      g_check_cfi = method == UnwindMethod::kCheck;
    }
  }
#else
  (void)memory;
#endif
  g_unwind_backtrace = g_loaded_backtrace;
}

namespace {

int FirstForeignFrame(void* const* raw, int n) {
  int first = 0;
  while (first < n && IsOwnFrame(reinterpret_cast<std::uintptr_t>(raw[first]))) ++first;
  return first;
}

// Compares the CFI walker's stack, from `start` as CaptureStack walks it, with `reference`
// (libgcc's, `n` frames of `capacity`). Both start inside heaprec at different call sites, so only
// the frames outside it are compared; a walk that reached the capacity is compared as far as the
// shorter one goes.
void CheckCfiWalk(void* const* reference, int n, int capacity, const WalkStart* start) {
  void* ours[kMaxStackDepth + kCaptureExtraFrames];
  int m = CfiBacktrace(ours, capacity, &g_rule_cache, &t_state.stack_window, start);
  g_checked.fetch_add(1, std::memory_order_relaxed);
  if (m < 0) {
    g_handed_over.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  int a = FirstForeignFrame(ours, m), b = FirstForeignFrame(reference, n);
  int common = m - a < n - b ? m - a : n - b;
  bool same = (m - a == n - b) || m == capacity || n == capacity;
  for (int i = 0; same && i < common; ++i) same = ours[a + i] == reference[b + i];
  if (!same) g_mismatched.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

std::uint32_t CaptureStack(std::uint64_t* frames, std::uint32_t max_depth, bool* truncated,
                           const WalkStart* start) {
  // Capture into `frames` itself, which the caller sized max_depth + kCaptureExtraFrames.
  void** raw = reinterpret_cast<void**>(frames);
  int capacity = static_cast<int>(max_depth + kCaptureExtraFrames);
  int n = g_use_cfi ? CfiBacktrace(raw, capacity, &g_rule_cache, &t_state.stack_window, start) : -1;
  if (n < 0) {
    n = g_unwind_backtrace != nullptr ? DwarfBacktrace(raw, capacity)
                                      : FramePointerBacktrace(raw, capacity);
    if (g_check_cfi && g_unwind_backtrace != nullptr) CheckCfiWalk(raw, n, capacity, start);
  }
  int first = FirstForeignFrame(raw, n);
  std::uint32_t kept = static_cast<std::uint32_t>(n - first);
  *truncated = kept > max_depth || n == capacity;
  if (kept > max_depth) kept = max_depth;
  // Return address minus one: inside the call instruction, so it symbolizes to the calling line
  // (and, at a function's end, to the right function when the call was its last instruction).
  // The walk usually starts at the hook's caller (first is 0), and the loop is then a vector one.
  if (first != 0) std::memmove(frames, frames + first, kept * sizeof(*frames));
  for (std::uint32_t i = 0; i < kept; ++i) frames[i] -= 1;
  return kept;
}

}  // namespace heaprec::preload

namespace heaprec::preload {

const char* UnwinderName() {
  if (g_use_cfi) return "dwarf";
  if (g_check_cfi && g_unwind_backtrace != nullptr) return "check";
  return g_unwind_backtrace != nullptr ? "libgcc" : "fp";
}

void ForgetUnwindRules() {
  if (g_rule_cache.ready()) g_rule_cache.Invalidate();
}

bool GetUnwindCheckCounts(UnwindCheckCounts* counts) {
  if (!g_check_cfi || g_unwind_backtrace == nullptr) return false;
  counts->checked = g_checked.load();
  counts->mismatched = g_mismatched.load();
  counts->handed_over = g_handed_over.load();
  return true;
}

void CloseUnwindGateForFork(bool wait) {
  g_fork_in_progress.store(true);
  // A thread inside the unwinder normally leaves it within microseconds; 50 ms covers a descheduled
  // one on a busy machine. A fork called from inside heaprec (a signal handler that forks) does
  // not wait for itself.
  for (int spins = 0; wait && g_unwinds_in_flight.load() != 0 && spins < 5000; ++spins) {
    if (spins < 100) {
      sched_yield();
    } else {
      timespec pause = {0, 10000};
      nanosleep(&pause, nullptr);
    }
  }
  g_child_avoids_dwarf = g_unwinds_in_flight.load() != 0 || !wait;
}

void OpenUnwindGateInParent() { g_fork_in_progress.store(false); }

void OpenUnwindGateInChild() {
  if (g_child_avoids_dwarf) g_unwind_backtrace = nullptr;
  g_unwinds_in_flight.store(0);
  g_fork_in_progress.store(false);
}

}  // namespace heaprec::preload
