// Sampling, on the slow side of the allocation hooks: whether the profiler samples now and at what
// interval (the public API's switch), and what happens when a thread's countdown expires. The
// countdown itself is core/sampler.h's Sampler::Account, inlined into every hook (hooks.cc); this
// is where an expired one is seeded, redrawn or parked while sampling is off.
#pragma once

#include <cstddef>
#include <cstdint>

namespace heaprec::preload {

// The thread's countdown expired on an allocation of `size` bytes, not performed yet. Draws the
// next sample point and returns the sampling interval when this allocation is to be recorded, 0
// when not (a sample point inside heaprec's own allocations, the profiler off, or a thread's first
// allocation that does not reach its first point). No locks, no allocation.
std::uint64_t DrawSample(std::size_t size);

// The switch and the interval, for the public API (control/api.cc) and attach (attach/dormant.cc).
// Lock-free.
bool IsActive();
void SetSampling(bool on);
void SetSampleInterval(std::uint64_t bytes);

// Whether every allocation is sampled (an interval of 1 byte: exact mode). Lock-free.
bool SamplesEveryAllocation();

// Turns sampling off for good, without touching any thread's countdown: for a child forked from
// inside heaprec, whose tables may be half-updated (fork_handlers.cc).
void TurnSamplingOff();

}  // namespace heaprec::preload
