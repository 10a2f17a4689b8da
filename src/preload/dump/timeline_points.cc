#include "preload/dump/timeline_points.h"

#include "core/appender.h"
#include "schema/profile_schema.h"

namespace heaprec::preload {

void TimelinePoints::Clear() {
  count_ = 0;
  spacing_ms_ = kFirstSpacingMs;
}

TimelinePoint TimelinePoints::Merged(const TimelinePoint* first, std::size_t n) {
  TimelinePoint merged = first[n - 1];
  for (std::size_t i = 0; i + 1 < n; ++i) {
    if (first[i].max > merged.max) merged.max = first[i].max;
  }
  return merged;
}

void TimelinePoints::Append(const TimelinePoint& point) {
  if (count_ == kCapacity) {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < count_; i += 2) {
      points_[kept++] = Merged(&points_[i], i + 1 < count_ ? 2 : 1);
    }
    count_ = kept;
    spacing_ms_ *= 2;
  }
  points_[count_++] = point;
}

bool TimelinePoints::FormatWithStride(const TimelineHeader& header, const TimelinePoint& last,
                                      std::size_t stride, char* out, std::size_t capacity) const {
  Appender text(out, capacity);
  text.Add(schema::kTimelinePrefix);
  text.Add(" start_ns=");
  text.AddUnsigned(header.start_ns, 1);
  text.Add(" interval=");
  text.AddUnsigned(header.interval, 1);
  text.Add(" peak_ms=");
  text.AddUnsigned(header.peak_ms, 1);
  text.Add(" peak=");
  text.AddSigned(header.peak, 1);
  text.Add(" points=");
  auto add = [&text](const TimelinePoint& p, bool first) {
    if (!first) text.Add(";", 1);
    text.AddUnsigned(p.t_ms, 1);
    text.Add(",", 1);
    text.AddSigned(p.live, 1);
    text.Add(",", 1);
    text.AddSigned(p.max, 1);
    text.Add(",", 1);
    text.AddUnsigned(p.rss, 1);
    text.Add(",", 1);
    text.AddSigned(p.allocated, 1);
  };
  for (std::size_t i = 0; i < count_; i += stride) {
    add(Merged(&points_[i], i + stride <= count_ ? stride : count_ - i), i == 0);
  }
  add(last, count_ == 0);
  return text.Finish();
}

bool TimelinePoints::Format(const TimelineHeader& header, const TimelinePoint& last, char* out,
                            std::size_t capacity) const {
  for (std::size_t stride = 1; stride <= kCapacity; stride *= 2) {
    if (FormatWithStride(header, last, stride, out, capacity)) return true;
  }
  return false;
}

}  // namespace heaprec::preload
