// The heap over time, kept in every process and written into every profile (the comment
// schema::kTimelinePrefix describes): the live-heap estimate, its highest value between points, the
// resident set and the bytes allocated so far, a point every 100 ms or more, and when the estimate
// was highest. A run then tells its story without a dump interval chosen beforehand.
//
//   sampled malloc / free ─▶ NoteTimeline: the highest estimate so far (two relaxed atomics);
//                            a point when 100 ms passed since the last (TryLock, /proc/self/statm)
//   a profile            ─▶ TimelineComment: the points so far and one for now, as text
//
// Points come from the sampled slow paths, not from a timer: no thread of its own, nothing in a
// process that never samples; an idle process's estimate cannot change between points anyway. The
// points are a fixed array (1,024, in .bss, touched as it fills); when it is full, neighbours are
// merged two by two (the later values, the higher maximum) and the spacing doubles, so a process
// running for a week keeps 1,024 points, about ten minutes apart, with its peak intact.
//
// Thread safety: NoteTimeline is lock-free but for a TryLock; TimelineComment waits a bounded time
// for that lock and otherwise writes no timeline. No malloc (the comment's text comes from the
// caller's MemoryResource). Async-signal-safe, but for the resident set's open and read.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/heap_recorder.h"
#include "core/memory_resource.h"

namespace heaprec::preload {

// After a sampled allocation or free, at `now_ns` (CLOCK_REALTIME_COARSE). Does nothing in a
// vfork child.
void NoteTimeline(HeapRecorder& recorder, std::uint64_t now_ns);

// The timeline as a profile comment, with a last point for `now_ns` and the resident set `rss`
// (the caller's reading, which the profile's comments report too: /proc/self/statm is read once
// per profile, five system calls): built in memory from `memory`, given back when this goes.
// text() is null when there is no timeline (not started, no memory, the lock held too long).
class TimelineComment {
 public:
  // `recorder` null: no timeline.
  TimelineComment(HeapRecorder* recorder, std::uint64_t now_ns, std::uint64_t rss,
                  MemoryResource& memory);
  ~TimelineComment();
  TimelineComment(const TimelineComment&) = delete;
  TimelineComment& operator=(const TimelineComment&) = delete;
  const char* text() const { return text_; }

 private:
  MemoryResource& memory_;
  char* text_ = nullptr;
};

// At start-up and in a fork child: a new timeline from `now_ns` (CLOCK_REALTIME).
void StartTimeline(std::uint64_t now_ns);

}  // namespace heaprec::preload
