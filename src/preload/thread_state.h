// Per-thread state of the preload library, in initial-exec TLS so the fast path reaches it with one
// %fs-relative access: no call to __tls_get_addr, no lazy allocation.
#pragma once

#include <cstdint>

#include "core/sampler.h"
#include "preload/unwind/cfi_unwinder.h"

namespace heaprec::preload {

// Frees of possibly-sampled blocks that arrive while this thread is inside heaprec, held until it
// leaves (see HookGuard). Beyond this many, the free is handled on the spot.
inline constexpr int kMaxDeferredFrees = 32;

struct ThreadState {
  SamplerState sampler;  // zero-initialized: the first allocation of a thread takes the slow path
  bool seeded;           // sampler drew its first distance
  bool in_hook;          // this thread is inside heaprec: allocations pass straight through
  std::uint8_t deferred_count;
  void* deferred_frees[kMaxDeferredFrees];
  // A termination signal that arrived while this thread was inside heaprec (possibly holding its
  // locks, which the final dump needs): raised again when the outermost HookGuard ends.
  volatile int deferred_signal;
  StackWindow stack_window;  // the CFI walker's checked stack pages (zero: none yet)
  // This thread's lane in the recorder (HeapRecorder::RecordWithHandle): its number in the order
  // threads were seeded, so that the first threads of a process never share one.
  std::uint32_t lane;
  // The last block this thread sampled, while it may still turn out temporary (slow_paths.cc).
  void* temporary_candidate;
  std::uint64_t temporary_size;
  std::uint64_t countdown_after_candidate;
};

extern __thread ThreadState t_state __attribute__((tls_model("initial-exec")));

// Forgets and frees the deferred blocks, then raises a deferred signal. Called by the outermost
// HookGuard on its way out.
void LeaveHeaprec();

// Marks the thread as inside heaprec for a scope, so that anything it allocates (the unwinder's
// caches, the dynamic loader, zlib) is passed straight to the real allocator and never sampled or
// recorded.
//
// Inside the scope the thread may hold one of heaprec's locks. A signal handler that runs on it and
// frees a sampled block must not take those locks (it would wait for itself), so such frees are
// deferred: the block is neither forgotten nor given back to the allocator until the outermost
// guard ends, which keeps its address from being reused in between. A signal that would end the
// process waits for the guard's end in the same way (see endings.h).
class HookGuard {
 public:
  HookGuard() : previous_(t_state.in_hook) { t_state.in_hook = true; }
  ~HookGuard() {
    t_state.in_hook = previous_;
    if (!previous_ && (t_state.deferred_count != 0 || t_state.deferred_signal != 0)) LeaveHeaprec();
  }
  HookGuard(const HookGuard&) = delete;
  HookGuard& operator=(const HookGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace heaprec::preload
