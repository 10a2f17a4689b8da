// The scales of the leaks chart (leaks_chart.cc): a byte axis from 0 to a site's own largest
// value, the time axis the panels share, both with "nice" ticks (1, 2 or 5 times a power of ten),
// and the clipping of a fitted line to a panel's range.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace heaprec::render {

// Live bytes from 0 to at least `max_bytes` (1 KiB when there is nothing), in B, KiB, MiB or GiB.
class BytesAxis {
 public:
  explicit BytesAxis(double max_bytes);
  double max_bytes() const { return max_ * scale_; }  // the top of the axis, in bytes
  const char* unit() const { return unit_; }
  double Fraction(double bytes) const { return bytes / scale_ / max_; }  // 0 at 0, 1 at the top
  std::vector<double> Ticks() const;                                     // in bytes
  std::string Label(double bytes) const;  // in the axis's unit, without trailing zeros

 private:
  double scale_ = 1;
  const char* unit_ = "B";
  double step_ = 1;  // in the unit
  double max_ = 1;   // in the unit
};

// Seconds since the series' first profile, in s, min or h.
class TimeAxis {
 public:
  explicit TimeAxis(double duration_seconds);
  const char* unit() const { return unit_; }
  double Fraction(double seconds) const { return seconds / scale_ / max_; }
  std::vector<double> Ticks() const;  // in seconds
  std::string Label(double seconds) const;

 private:
  double scale_ = 1;
  const char* unit_ = "s";
  double step_ = 1;
  double max_ = 1;
};

// The part of the line y = intercept + slope·t over [t0, t1] where low <= y <= high, as its two
// ends; none when the line stays outside.
struct Segment {
  double t0, y0, t1, y1;
};
std::optional<Segment> ClipLine(double intercept, double slope, double t0, double t1, double low,
                                double high);

}  // namespace heaprec::render
