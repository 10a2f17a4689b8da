// The heap over time that every native profile carries (the comment schema::kTimelinePrefix
// describes), read back: the live-heap estimate with its interval, its highest value between
// points, the resident set and the bytes allocated, and when the estimate peaked.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace heaprec::analysis {

struct TimelinePoint {
  uint64_t t_ms = 0;      // since Timeline::start_ns
  int64_t live = 0;       // the live-heap estimate
  int64_t max = 0;        // its highest value since the point before
  uint64_t rss = 0;       // resident bytes; 0: unknown
  int64_t allocated = 0;  // bytes allocated since the start, freed ones too (estimate)
};

struct Timeline {
  uint64_t start_ns = 0;              // CLOCK_REALTIME
  uint64_t interval = 0;              // the sampling interval in bytes; <= 1: exact
  uint64_t peak_ms = 0;               // when the estimate was highest, since start_ns
  int64_t peak = 0;                   // that estimate
  std::vector<TimelinePoint> points;  // in time order

  // The half-width of the 95% interval of an estimate of `bytes`: 1.96·sqrt(interval·bytes), the
  // per-byte sampling model's (profile/sampling_error.h); 0 when exact.
  double Error(int64_t bytes) const;
  uint64_t duration_ms() const { return points.empty() ? 0 : points.back().t_ms; }
};

// Whether `comment` is a timeline comment (it may still be malformed).
bool IsTimelineComment(const std::string& comment);

// The timeline in `comment`, or nullopt when it is not one or is malformed (a profile from a newer
// version, a truncated string): a report never fails over its timeline.
std::optional<Timeline> ParseTimeline(const std::string& comment);

}  // namespace heaprec::analysis
