// Captures the call stack of a sampled allocation.
//
// By default ("dwarf") with heaprec's own walker of the DWARF call-frame information (see
// cfi_unwinder.h): one cached rule per return address, so a frame costs a hash probe, where
// libgcc's _Unwind_Backtrace interprets the frame's CFI program on every walk. Stacks with a frame
// it does not model (a signal frame, a CFA expression) are walked by libgcc's unwinder instead,
// which is also available alone ("libgcc"). Both work on the optimized, frame-pointer-less code
// that distributions ship, and find unwind tables with glibc's _dl_find_object, which takes no
// lock (dl_iterate_phdr takes the loader's dl_load_write_lock, which a child of fork() may find
// taken forever), opens nothing and allocates nothing. libunwind, used before, fails both: it
// looks tables up through dl_iterate_phdr, and it validates addresses by writing them to a pipe it
// keeps open behind the program's back, re-creating it (closing whatever descriptors now have its
// numbers) when the program closed it. libgcc_s is loaded with dlopen(RTLD_LOCAL), so C programs
// do not get its symbols in their scope.
//
// Frame-pointer walking is the fallback when libgcc_s cannot be loaded (heaprec says so once, and
// profiles record the unwinder used), or on request: each frame must lie above the previous one and
// be readable, or the walk stops. It takes no lock and allocates nothing.
//
// Called only on the sampled slow path, with the thread's HookGuard held. Not async-signal-safe.
// No locks of its own; see the fork gate below.
#pragma once

#include <cstdint>

#include "core/memory_resource.h"
#include "preload/control/settings.h"
#include "preload/unwind/cfi_unwinder.h"

namespace heaprec::preload {

// CaptureStack needs this many frames of room beyond max_depth (heaprec's own frames, plus one to
// detect truncation).
inline constexpr std::uint32_t kCaptureExtraFrames = 9;

// Loads libgcc's unwinder for "dwarf" (as the fallback), "libgcc" and "check", and walks once to
// initialize it; without it, stacks are walked by frame pointers. Call once in the constructor,
// under a HookGuard, in every mode (a dormant one too): dlopen and dlsym take the loader's lock,
// which glibc 2.36 does not reset in a fork child, so they must not run on heaprec's thread while
// the program's threads may fork (the child would hang in its next dlopen, or in exit).
void LoadUnwinderLibrary(UnwindMethod method);

// Sets up the unwinder `method` names, its rule cache from `memory`, on what LoadUnwinderLibrary
// found. No loader call: the first attach of a dormant process runs it on the dump thread.
void InitUnwinder(UnwindMethod method, MemoryResource& memory);

// Forgets what was learnt about loaded code: after an object is unloaded, its addresses may be
// reused by another.
void ForgetUnwindRules();

// Fills `frames` (leaf first) with return addresses minus one (the address inside the call
// instruction, which symbolizes to the calling line), starting at the first frame outside heaprec.
// Returns the number of frames; sets *truncated when the stack was deeper than `max_depth`.
// `frames` must have room for max_depth + kCaptureExtraFrames entries. The CFI walker starts at
// `start` (the slow path's caller, see HEAPREC_CALLER_OF_THIS_FUNCTION) when given, so heaprec's
// own frames are not walked at all; the other unwinders walk them and drop them.
std::uint32_t CaptureStack(std::uint64_t* frames, std::uint32_t max_depth, bool* truncated,
                           const WalkStart* start = nullptr);

// "dwarf", "libgcc", "check" or "fp": what CaptureStack uses now, for the profile's comments.
const char* UnwinderName();

// "check" records libgcc's stacks and walks each one with the CFI walker too, comparing them: a
// way to test the walker on any program. False when not checking.
struct UnwindCheckCounts {
  std::uint64_t checked, mismatched, handed_over;  // handed over: the walker deferred to libgcc
};
bool GetUnwindCheckCounts(UnwindCheckCounts* counts);

// fork() handlers (see unwinder.cc): before fork, from the forking thread (`wait` false when it is
// itself inside heaprec); after it, in the parent and in the child.
void CloseUnwindGateForFork(bool wait);
void OpenUnwindGateInParent();
void OpenUnwindGateInChild();

}  // namespace heaprec::preload
