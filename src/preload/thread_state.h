// Per-thread state of the preload library, in initial-exec TLS so the fast path reaches it with one
// %fs-relative access: no call to __tls_get_addr, no lazy allocation.
#pragma once

#include <cstdint>

#include "core/sampler.h"

namespace heaprec::preload {

struct ThreadState {
  SamplerState sampler;  // zero-initialized: the first allocation of a thread takes the slow path
  bool seeded;           // sampler drew its first distance
  bool in_hook;          // this thread is inside heaprec: allocations pass straight through
  std::uintptr_t stack_low, stack_high;  // bounds for frame-pointer unwinding, 0 until known
};

extern __thread ThreadState t_state __attribute__((tls_model("initial-exec")));

// Marks the thread as inside heaprec for a scope, so that anything it allocates (libunwind's
// caches, the dynamic loader, zlib) is passed straight to the real allocator and never sampled or
// recorded.
class HookGuard {
 public:
  HookGuard() : previous_(t_state.in_hook) { t_state.in_hook = true; }
  ~HookGuard() { t_state.in_hook = previous_; }
  HookGuard(const HookGuard&) = delete;
  HookGuard& operator=(const HookGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace heaprec::preload
