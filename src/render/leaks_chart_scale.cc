// The leaks chart's axes and clipping (leaks_chart_scale.h).
#include "render/leaks_chart_scale.h"

#include <algorithm>
#include <cmath>

#include "render/format.h"

namespace heaprec::render {
namespace {

// A "nice" step (1, 2 or 5 times a power of ten) giving about `count` intervals over `range`.
double NiceStep(double range, int count) {
  if (range <= 0) return 1;
  double raw = range / count;
  double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double f = raw / magnitude;
  double nice = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
  return nice * magnitude;
}

// The top of an axis: the first multiple of `step` at or above `range` (one step at least).
double AxisMax(double range, double step) {
  return std::max(step, std::ceil(range / step - 1e-9) * step);
}

std::vector<double> TicksUpTo(double max, double step, double scale) {
  std::vector<double> ticks;
  for (double v = 0; v <= max + step / 2; v += step) ticks.push_back(v * scale);
  return ticks;
}

// Tick label without trailing zeros ("0.5", "2", "12.5").
std::string TickLabel(double v, double step) {
  int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  return FormatFixed(v, std::clamp(decimals, 0, 6));
}

}  // namespace

BytesAxis::BytesAxis(double max_bytes) {
  if (!(max_bytes >= 1)) max_bytes = 1024;  // nothing to draw (or NaN): an axis up to 1 KiB
  constexpr double kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
  if (max_bytes >= kGiB) {
    scale_ = kGiB, unit_ = "GiB";
  } else if (max_bytes >= kMiB) {
    scale_ = kMiB, unit_ = "MiB";
  } else if (max_bytes >= kKiB) {
    scale_ = kKiB, unit_ = "KiB";
  }
  // Four intervals: a panel is 150 px high.
  step_ = NiceStep(std::max(max_bytes / scale_, 1e-9), 4);
  max_ = AxisMax(max_bytes / scale_, step_);
}

std::vector<double> BytesAxis::Ticks() const { return TicksUpTo(max_, step_, scale_); }

std::string BytesAxis::Label(double bytes) const { return TickLabel(bytes / scale_, step_); }

TimeAxis::TimeAxis(double duration_seconds) {
  if (duration_seconds >= 7200) {
    scale_ = 3600, unit_ = "h";
  } else if (duration_seconds >= 300) {
    scale_ = 60, unit_ = "min";
  }
  double range = duration_seconds > 0 ? duration_seconds / scale_ : 1;
  step_ = NiceStep(range, 6);
  max_ = AxisMax(range, step_);
}

std::vector<double> TimeAxis::Ticks() const { return TicksUpTo(max_, step_, scale_); }

std::string TimeAxis::Label(double seconds) const { return TickLabel(seconds / scale_, step_); }

std::optional<Segment> ClipLine(double intercept, double slope, double t0, double t1, double low,
                                double high) {
  if (t1 < t0 || low > high) return std::nullopt;
  auto at = [&](double t) { return intercept + slope * t; };
  if (slope != 0) {
    // Where the line crosses low and high, in time order.
    double a = (low - intercept) / slope, b = (high - intercept) / slope;
    t0 = std::max(t0, std::min(a, b));
    t1 = std::min(t1, std::max(a, b));
    if (t1 < t0) return std::nullopt;
  } else if (intercept < low || intercept > high) {
    return std::nullopt;
  }
  // Rounding can leave an end a hair outside: clamp the values, the times are right.
  return Segment{t0, std::clamp(at(t0), low, high), t1, std::clamp(at(t1), low, high)};
}

}  // namespace heaprec::render
