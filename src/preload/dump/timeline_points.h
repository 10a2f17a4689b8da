// The timeline's points (timeline.h keeps one of these for the process): a fixed array that, when
// full, merges its neighbours two by two and doubles its spacing, so that any run keeps at most
// kCapacity points, its highest estimate intact; and their text, the comment
// schema::kTimelinePrefix describes. No globals, no locks, no malloc: the caller serializes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace heaprec::preload {

struct TimelinePoint {
  std::uint64_t t_ms;      // since the timeline's start
  std::int64_t live, max;  // the live-heap estimate then, and its highest since the point before
  std::uint64_t rss;       // resident bytes, 0: unknown
  std::int64_t allocated;  // bytes allocated since the start (estimate, freed ones too)
};

// What the comment says besides its points.
struct TimelineHeader {
  std::uint64_t start_ns;  // CLOCK_REALTIME
  std::uint64_t interval;  // the sampling interval, for the estimates' error bars
  std::uint64_t peak_ms;   // when the estimate was highest, since the start
  std::int64_t peak;       // its highest value
};

class TimelinePoints {
 public:
  static constexpr std::size_t kCapacity = 1024;
  static constexpr std::uint64_t kFirstSpacingMs = 100;

  // Forgets every point (a fork child's timeline starts afresh).
  void Clear();
  // Appends `point`, merging the points two by two first when they fill the array.
  void Append(const TimelinePoint& point);
  std::size_t count() const { return count_; }
  const TimelinePoint& operator[](std::size_t i) const { return points_[i]; }
  // The time to leave between points now: kFirstSpacingMs, doubled at each merge.
  std::uint64_t spacing_ms() const { return spacing_ms_; }

  // Writes the comment, the points and then `last` (a point for now, not kept), NUL-terminated,
  // into `out`; when they do not fit in `capacity` bytes, points are merged 2, 4, ... at a time in
  // the text (not in the array) until they do. False when not even one merged point fits.
  bool Format(const TimelineHeader& header, const TimelinePoint& last, char* out,
              std::size_t capacity) const;

 private:
  TimelinePoint points_[kCapacity];
  std::size_t count_ = 0;
  std::uint64_t spacing_ms_ = kFirstSpacingMs;

  // Points [first, first + n) as one: the last one's values, the highest maximum of them all.
  static TimelinePoint Merged(const TimelinePoint* first, std::size_t n);
  bool FormatWithStride(const TimelineHeader& header, const TimelinePoint& last, std::size_t stride,
                        char* out, std::size_t capacity) const;
};

}  // namespace heaprec::preload
