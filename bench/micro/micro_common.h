// Shared by the microbenchmarks and dump_cost: heaprec's API looked up at run time, forcing the
// sampling mode, a nanosecond clock for timing batches, and call stacks of a chosen depth.
//
// The binaries are not linked against libheaprec.so: they find it with dlsym, so the same binary
// can tell whether it really runs under LD_PRELOAD and refuse to report otherwise.
#pragma once

#include <dlfcn.h>
#include <pthread.h>
#include <time.h>
#include <unwind.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "heaprec/heaprec.h"

// glibc's own names for its allocator. heaprec forwards to them and never interposes them, so a
// call here is the real allocator with no profiler in front of it.
extern "C" {
void* __libc_malloc(std::size_t size);
void __libc_free(void* block);
}

namespace heaprec_bench {

// The two allocators every comparison runs: glibc through its exported names, which heaprec never
// interposes, and the interposed malloc/free (heaprec's when it is preloaded).
struct Real {
  static void* Malloc(std::size_t n) { return __libc_malloc(n); }
  static void Free(void* p) { __libc_free(p); }
};
struct Heaprec {
  static void* Malloc(std::size_t n) { return malloc(n); }
  static void Free(void* p) { free(p); }
};

inline std::uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

// A compiler barrier: `value` must be computed here and memory is assumed read and written.
template <typename T>
inline void Opaque(T& value) {
  asm volatile("" : "+r"(value) : : "memory");
}

struct HeaprecApi {
  decltype(&heaprec_dump) dump = nullptr;
  decltype(&heaprec_stop) stop = nullptr;
  decltype(&heaprec_start) start = nullptr;
  decltype(&heaprec_set_sample_interval) set_sample_interval = nullptr;
  decltype(&heaprec_is_active) is_active = nullptr;

  static HeaprecApi Load() {
    HeaprecApi api;
    api.dump = reinterpret_cast<decltype(dump)>(dlsym(RTLD_DEFAULT, "heaprec_dump"));
    api.stop = reinterpret_cast<decltype(stop)>(dlsym(RTLD_DEFAULT, "heaprec_stop"));
    api.start = reinterpret_cast<decltype(start)>(dlsym(RTLD_DEFAULT, "heaprec_start"));
    api.set_sample_interval = reinterpret_cast<decltype(set_sample_interval)>(
        dlsym(RTLD_DEFAULT, "heaprec_set_sample_interval"));
    api.is_active = reinterpret_cast<decltype(is_active)>(dlsym(RTLD_DEFAULT, "heaprec_is_active"));
    return api;
  }
};

// Checks that heaprec is loaded, interposes malloc and is active, then makes it sample with mean
// `interval` bytes (1: every allocation). Returns nullptr on success, else why not (for
// SkipWithError). The mode is forced through the API rather than trusted from the environment, so a
// stray HEAPREC_SAMPLE_INTERVAL cannot silently turn an "unsampled" figure into a sampled one.
// heaprec_stop/start make this thread draw its next sample point from the new interval at once;
// threads started later draw from it anyway.
inline const char* UseSampleInterval(std::uint64_t interval) {
  // dlsym rather than &malloc == &__libc_malloc, which the compiler may fold to "different".
  if (dlsym(RTLD_DEFAULT, "malloc") == dlsym(RTLD_DEFAULT, "__libc_malloc")) {
    return "malloc is not interposed: run under LD_PRELOAD=BUILD/lib/libheaprec.so "
           "(bench/micro/run_micro.sh does)";
  }
  HeaprecApi api = HeaprecApi::Load();
  if (api.is_active == nullptr || api.set_sample_interval == nullptr || api.stop == nullptr ||
      api.start == nullptr) {
    return "malloc is interposed, but not by heaprec (heaprec_is_active not found)";
  }
  if (api.is_active() != 1) return "heaprec is loaded but not active (a bad HEAPREC_* setting?)";
  if (api.set_sample_interval(interval) != 0 || api.stop() != 0 || api.start() != 0) {
    return "could not set heaprec's sampling interval";
  }
  return nullptr;
}

// libgcc's _Unwind_Backtrace, loaded privately the way heaprec loads it (src/preload/unwinder.cc),
// behind an unw_backtrace-like signature: fills `out` with up to `max` return addresses.
using UnwBacktraceFn = int (*)(void**, int);
struct DwarfWalk {
  void** out;
  int count, capacity;
  _Unwind_Ptr (*get_ip)(_Unwind_Context*);
};
inline _Unwind_Reason_Code CollectDwarfFrame(_Unwind_Context* context, void* argument) {
  auto* walk = static_cast<DwarfWalk*>(argument);
  _Unwind_Ptr ip = walk->get_ip(context);
  if (walk->count == walk->capacity || ip == 0) return _URC_END_OF_STACK;
  walk->out[walk->count++] = reinterpret_cast<void*>(ip);
  return _URC_NO_REASON;
}
inline int DwarfBacktrace(void** out, int max) {
  using BacktraceFn = _Unwind_Reason_Code (*)(_Unwind_Trace_Fn, void*);
  using GetIpFn = _Unwind_Ptr (*)(_Unwind_Context*);
  static void* handle = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);
  static auto backtrace = handle != nullptr
                              ? reinterpret_cast<BacktraceFn>(dlsym(handle, "_Unwind_Backtrace"))
                              : nullptr;
  static auto get_ip =
      handle != nullptr ? reinterpret_cast<GetIpFn>(dlsym(handle, "_Unwind_GetIP")) : nullptr;
  if (backtrace == nullptr || get_ip == nullptr) return -1;
  DwarfWalk walk = {out, 0, max, get_ip};
  backtrace(CollectDwarfFrame, &walk);
  return walk.count;
}
// Null when libgcc_s cannot be loaded. (The argument is kept for the callers: libgcc's unwinder has
// no cache to choose.)
inline UnwBacktraceFn LoadUnwBacktrace(bool /*per_thread_cache*/) {
  void* probe[1];
  return DwarfBacktrace(probe, 1) < 0 ? nullptr : DwarfBacktrace;
}

// Frames an unwinder sees from the function that calls FramesBelowCaller, that function included:
// the depth heaprec records for an allocation made there. 0 without libgcc_s.
__attribute__((noinline)) inline int FramesBelowCaller() {
  static UnwBacktraceFn backtrace = LoadUnwBacktrace(false);
  if (backtrace == nullptr) return 0;
  void* frames[1100];
  int n = backtrace(frames, 1100);  // frames[0] is in this function
  return n - 1;
}

// Call stacks of a chosen depth with distinct call sites.
//
// Step<0..3> are four different functions (their bodies differ by kSite, so identical-code folding
// cannot merge them); at each level the path's low two bits pick which one is called next, so two
// paths give stacks that differ in their return addresses, as the stacks of different allocation
// sites do. noinline and the barrier after the call keep every level a real frame (no inlining, no
// tail call, no recursion turned into a loop). The leaf runs at depth levels + 1 below Descend's
// caller.
using LeafFn = void (*)(void* arg);
struct Descent {
  int levels;
  std::uint64_t path;
  LeafFn leaf;
  void* arg;
};

template <int kSite>
__attribute__((noinline)) int Step(Descent& d);

inline int (*const kSteps[4])(Descent&) = {Step<0>, Step<1>, Step<2>, Step<3>};

template <int kSite>
__attribute__((noinline)) int Step(Descent& d) {
  int result = kSite;
  if (d.levels == 0) {
    d.leaf(d.arg);
  } else {
    --d.levels;
    unsigned site = static_cast<unsigned>(d.path & 3);
    d.path = (d.path >> 2) | (d.path << 62);  // rotate: deep stacks keep varying
    result += kSteps[site](d);
  }
  Opaque(result);
  return result;
}

// Mixes a small path number into 64 well-spread bits, so neighbouring paths differ at every level.
inline std::uint64_t PathBits(std::uint64_t path) {
  std::uint64_t z = path + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Runs leaf(arg) `levels` + 1 Step frames below the caller.
__attribute__((noinline)) inline int Descend(int levels, std::uint64_t path, LeafFn leaf,
                                             void* arg) {
  Descent d{levels, PathBits(path), leaf, arg};
  int result = kSteps[d.path & 3](d);
  Opaque(result);
  return result;
}

// The Step levels needed so that a leaf called through Descend from the caller sits at total depth
// `depth` (the leaf's own frame included); -1 if the caller is already too deep.
__attribute__((noinline)) inline void CountFramesLeaf(void* out) {
  *static_cast<int*>(out) = FramesBelowCaller();
}
__attribute__((noinline)) inline int LevelsForDepth(int depth) {
  int at_zero = 0;
  Descend(0, 0, CountFramesLeaf, &at_zero);
  // at_zero counts [leaf, Step, Descend, LevelsForDepth, caller...]; a real descent from the caller
  // has no LevelsForDepth frame.
  int base = at_zero - 1;
  return depth >= base ? depth - base : -1;
}

// Runs fn(arg) on a new thread and waits for it. A fresh thread has only a few frames below its
// start routine (start_thread, clone3), so shallow stacks such as depth 10 are reachable, which the
// benchmark framework's ~10 frames on the main thread would not allow.
inline void RunOnFreshThread(void (*fn)(void*), void* arg) {
  struct Call {
    void (*fn)(void*);
    void* arg;
  } call{fn, arg};
  pthread_t thread;
  if (pthread_create(
          &thread, nullptr,
          [](void* c) -> void* {
            auto* call = static_cast<Call*>(c);
            call->fn(call->arg);
            return nullptr;
          },
          &call) != 0) {
    fn(arg);  // cannot happen in practice; the depth counter then shows the difference
    return;
  }
  pthread_join(thread, nullptr);
}

}  // namespace heaprec_bench
