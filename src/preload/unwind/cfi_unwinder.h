// heaprec's own stack walker for x86-64: DWARF call-frame information, cached per return address.
//
// libgcc's _Unwind_Backtrace interprets each frame's CFI program on every walk (about 130 ns per
// frame here). Almost every frame of compiled code steps with a rule that fits in one word (see
// frame_rule.h), so this walker computes that rule once per return address, keeps it in a
// lock-free table and afterwards steps a frame with a hash probe and two loads from the stack.
// Frames it cannot step (signal trampolines, CFA expressions) make it give the whole stack back
// to the caller, which then uses libgcc.
//
// Safety inside someone else's process:
//  - reads only the calling thread's own stack, and only words the walk has checked are mapped
//    (see StackWindow), plus the loaded objects' own unwind tables;
//  - no lock, no allocation, no system call on the common path: _dl_find_object is lock-free and
//    safe in a child of fork(); the table is published with a sequence check, so a thread that
//    forks or is interrupted mid-update leaves at worst one unusable slot;
//  - rules are invalidated whenever objects are loaded or unloaded (a new object may reuse an old
//    one's addresses).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "preload/unwind/frame_rule.h"

namespace heaprec::preload {

// The last walk of a thread, step by step: the registers at each step (stack pointer, the pc looked
// up there, frame pointer) and the step's rule. The thread's next walk uses it two ways.
//  - Where it reaches the same stack pointer with the same pc, it takes that step's rule from here
//    instead of probing the cache's hash table, which a large heap keeps out of the CPU's caches.
//    The walks are lined up by stack pointer, not by step number: an interpreter allocates from
//    call paths of every depth, which differ near the allocation and meet further up, at the same
//    frames at the same addresses (a step number would shift with the depth of the part below).
//  - Where it reaches a step in the same registers, the rest of the last walk is this walk's too if
//    the stack words that walk read from there on (each return address, each saved frame pointer)
//    still hold what they held: a walk is a function of the registers it starts from and the words
//    it reads. The walk checks those words, one comparison a frame, and takes the frames (Replay).
// Each entry is a (pc, rule) pair valid on its own, so a walk may use any memo's entries; a memo is
// written by one walk at a time (FrameRuleCache::ClaimMemo), into the half the last walk is not
// in, and emptied when the cache's rules are invalidated.
struct RuleMemo {
  static constexpr int kSteps = 128;
  struct Step {
    std::uintptr_t sp;  // rising from step to step within a walk; 0: no rule kept for this step
    std::uintptr_t pc;
    std::uintptr_t fp;   // the frame pointer, when kFpKnown is set in `rule`
    std::uint64_t rule;  // FrameRule::word(), with kFpKnown
  };
  static constexpr std::uint64_t kFpKnown = 1u << 15;  // a bit FrameRule words leave clear
  std::atomic<bool> busy;
  std::uint64_t generation;  // the cache's when the entries were written
  std::uint32_t last;        // the half that holds the last walk
  std::uint32_t count[2];    // steps kept in each half
  std::uint64_t replayed;    // frames walks took by Replay (for tests and diagnostics)
  Step steps[2][kSteps];
};

class FrameRuleCache {
 public:
  struct Slot {
    std::atomic<std::uint64_t> key;   // pc | generation << 48; 0 empty, 1 being written
    std::atomic<std::uint64_t> rule;  // FrameRule::word()
  };
  static constexpr std::size_t kSlotBytes = sizeof(Slot);

  // `slots`: zeroed memory for `capacity` slots (a power of two), owned by the caller; `memos`
  // (optional) zeroed memory for `memo_count` memos.
  void Init(Slot* slots, std::size_t capacity, RuleMemo* memos = nullptr,
            std::size_t memo_count = 0);
  bool ready() const { return slots_ != nullptr; }

  // The memo for the thread `thread_key` stands for (its StackWindow), up to date with the rules,
  // if no other walk holds it; null otherwise. Lock-free; ReleaseMemo gives it back.
  RuleMemo* ClaimMemo(const void* thread_key);
  static void ReleaseMemo(RuleMemo* memo) {
    if (memo != nullptr) memo->busy.store(false, std::memory_order_release);
  }

  // The cached rule for `pc`, or a rule of kind kUnset.
  FrameRule Find(std::uintptr_t pc) const;
  // Publishes `rule` for `pc`, replacing an older entry when the probe window is full.
  void Insert(std::uintptr_t pc, FrameRule rule);
  // Forgets every rule (after dlopen/dlclose).
  void Invalidate();

 private:
  static constexpr std::uint64_t kWriting = 1;
  static constexpr int kProbes = 4;
  std::uint64_t KeyFor(std::uintptr_t pc) const {
    return pc | generation_.load(std::memory_order_relaxed) << 48;
  }
  std::size_t SlotFor(std::uintptr_t pc) const {
    return static_cast<std::size_t>((pc * 0x9e3779b97f4a7c15ull) >> 32) & mask_;
  }

  Slot* slots_ = nullptr;
  std::size_t mask_ = 0;
  RuleMemo* memos_ = nullptr;
  std::size_t memo_count_ = 0;
  std::atomic<std::uint64_t> generation_{1};
  std::atomic<bool> prefaulted_{false};  // the slots' pages were made present (first Insert)
};

// Stack memory the calling thread has found mapped: [low, high) is contiguous and checked one page
// at a time. One per thread (in thread-local storage), reused across walks; a walk that starts
// outside it (the stack grew, or the thread switched to another stack) starts a new one.
struct StackWindow {
  std::uintptr_t low, high;
};

// The registers of a frame of the calling thread just after its callee returned: `pc` the return
// address, `sp` the callee's CFA (the stack pointer after the return), `fp` the frame pointer the
// callee restores. A walk started there skips every frame below it (see CallerOfThisFunction).
struct WalkStart {
  std::uintptr_t pc, sp, fp;
};

// The WalkStart of the caller of the function this is expanded in, which must keep a frame pointer
// (the preload library is built with -fno-omit-frame-pointer: its saved rbp is the caller's).
#define HEAPREC_CALLER_OF_THIS_FUNCTION()                                                       \
  (::heaprec::preload::WalkStart{reinterpret_cast<std::uintptr_t>(__builtin_return_address(0)), \
                                 reinterpret_cast<std::uintptr_t>(__builtin_dwarf_cfa()),       \
                                 *static_cast<const std::uintptr_t*>(__builtin_frame_address(0))})

// Walks the calling thread's stack into `out` (return addresses, innermost first): from `start`
// (its pc first) when given, else starting with this function's caller's. Returns the number of
// frames, or -1 when a frame needs libgcc (the caller then walks the whole stack with it).
int CfiBacktrace(void** out, int max, FrameRuleCache* cache, StackWindow* window,
                 const WalkStart* start = nullptr);

}  // namespace heaprec::preload
