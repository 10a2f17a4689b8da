// An inline function with a large body, compiled into both of discarded_copy_*.cc's units with
// different options, so that the two copies differ and the linker keeps the first unit's: the
// second unit's debug info for its copy (line rows, ranges) is left at address 0, over the first
// few pages of the PIE, where _start is.
#pragma once

// One step of Churn's body for each N down to 1, all inlined: straight-line code, no loop.
template <int N>
__attribute__((always_inline)) inline void Steps(volatile unsigned long* sink) {
  if constexpr (N > 0) {
    sink[N % 64] = sink[(N * 7) % 64] * static_cast<unsigned long>(N) + sink[(N * 13) % 64];
    Steps<N - 1>(sink);
  }
}

// About 15 KiB of code at -O2.
inline __attribute__((noinline)) void Churn(volatile unsigned long* sink) { Steps<512>(sink); }
