// Captures the call stack of a sampled allocation.
//
// libunwind (DWARF CFI, with its per-thread cache) by default: it works on the optimized,
// frame-pointer- less code that most distributions ship. It is loaded with dlopen(RTLD_LOCAL)
// rather than linked: a library linked into a preloaded one joins the global symbol scope, and
// libunwind exports _Unwind_RaiseException and friends, which would take over C++ exception
// handling for the whole program (and its weak `backtrace` would replace glibc's). Loaded locally,
// only heaprec sees it.
//
// Frame-pointer walking is the fallback when libunwind cannot be loaded, or on request: each frame
// must lie above the previous one and inside the thread's stack, or the walk stops.
//
// Called only on the sampled slow path, with the thread's HookGuard held (libunwind may allocate on
// first use in a thread). Not async-signal-safe. No locks of its own.
#pragma once

#include <cstdint>

#include "preload/settings.h"

namespace heaprec::preload {

// CaptureStack needs this many frames of room beyond max_depth (heaprec's own frames, plus one to
// detect truncation).
inline constexpr std::uint32_t kCaptureExtraFrames = 9;

// Loads libunwind if `method` asks for it; falls back to frame pointers when it cannot be loaded.
// Call once at start-up, under a HookGuard.
void InitUnwinder(UnwindMethod method);

// Fills `frames` (leaf first) with return addresses minus one (the address inside the call
// instruction, which symbolizes to the calling line), starting at the first frame outside heaprec.
// Returns the number of frames; sets *truncated when the stack was deeper than `max_depth`.
// `frames` must have room for max_depth + kCaptureExtraFrames entries.
std::uint32_t CaptureStack(std::uint64_t* frames, std::uint32_t max_depth, bool* truncated);

}  // namespace heaprec::preload
