// The peak profile: a copy of the live set taken as the live heap grows, written to disk (at most
// once per second, by the dump thread) so that a process killed with SIGKILL still leaves it; and
// the HEAPREC_DUMP_ABOVE trigger, which watches the same estimate on the same path.
//
// Each sampled allocation compares the live-bytes estimate with a threshold, 10% above the last
// captured peak; past it, one thread copies the live set (the others skip: a copy a moment later is
// as good). Copying never waits for a write: the writer swaps the newest copy out and writes it
// while the next one is captured into the other buffer. The copies' stacks stay pinned until they
// are replaced, which is free while the allocation history keeps every stack anyway. Captured
// copies underestimate the true peak by at most the 10% refresh margin.
//
// Async-signal-safe unless stated, like the dumps (dump.h): the final dump writes the peak copy.
#pragma once

#include <cstdint>

#include "core/heap_recorder.h"

namespace heaprec::preload {

// After a sampled allocation: copies the live set if the live-bytes estimate passed 1.1x the last
// captured peak and asks the dump thread to write it; asks for a HEAPREC_DUMP_ABOVE profile when
// the estimate crossed the next line. May lock (try-lock only for the copy); allocates from the
// arena.
void MaybeCapturePeak(HeapRecorder& recorder);

// The dump thread: writes the peak copy to disk if the file does not hold it yet, unless the final
// profile was written already (the process is ending).
void WritePeakProfile();

// The final dump: brings the peak file up to date next to the final profile at `final_path` (the
// peak file's name, unless an earlier write chose it).
void WritePeakNextTo(const char* final_path);

// exec, with the dump locks held (LockDumps): the image goes, and with it the heap record that kept
// the newest peak copy and the dump thread that would have written it, so the peak file is
// brought up to date here.
void WritePeakBeforeExec();

// The heap record has just started (under the dump's lock): it gets the newest peak copy that is
// not on disk yet, which was taken before the record existed.
void KeepPeakInHeapRecord();

// Peak profiles written so far, and the time that took, for the final profile's comments: what the
// on-disk peak costs.
struct PeakWriteCosts {
  std::uint64_t writes;
  std::uint64_t write_ns;
  std::uint64_t captures;  // copies taken on the allocating threads
  std::uint64_t capture_ns;
};
PeakWriteCosts PeakWritesSoFar();

// The peak's lock, taken after the dump's (dump.h's LockDumps), and the child's fresh start after
// fork: the parent's copy says nothing about the child's heap.
void LockPeak();
void UnlockPeak();
void ResetPeakAfterForkInChild();

}  // namespace heaprec::preload
