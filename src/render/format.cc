#include "render/format.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <iterator>

#include "profile/sampling_error.h"
#include "schema/profile_schema.h"

namespace heaprec::render {

std::string FormatValue(int64_t value, const std::string& unit) {
  char buf[64];
  if (unit == schema::kBytesUnit) {
    static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
    double magnitude = std::abs(static_cast<double>(value));
    if (magnitude < 1024) {
      std::snprintf(buf, sizeof buf, "%" PRId64 " B", value);
      return buf;
    }
    double scaled = static_cast<double>(value) / 1024;
    size_t u = 0;
    while (std::abs(scaled) >= 1024 && u + 1 < std::size(kUnits)) {
      scaled /= 1024;
      ++u;
    }
    std::snprintf(buf, sizeof buf, "%.1f %s", scaled, kUnits[u]);
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%" PRId64, value);
  if (unit.empty() || unit == schema::kCountUnit) return buf;
  return std::string(buf) + " " + unit;
}

std::string FormatBytes(double bytes) {
  return FormatValue(std::llround(bytes), schema::kBytesUnit);
}

std::string FormatChange(int64_t change, const std::string& unit) {
  return (change > 0 ? "+" : "") + FormatValue(change, unit);
}

std::string FormatMargin(double variance, const std::string& unit) {
  if (!std::isfinite(variance)) return "±?";
  double half = profile::Confidence95(0.0, variance).high;
  return "±" + FormatValue(std::llround(half), unit);
}

double Percent(int64_t part, int64_t total) {
  return total == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(total);
}

std::string FormatPercent(double percent) { return FormatFixed(percent, 1) + "%"; }

std::string FormatFixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

std::string FormatSeconds(double seconds) {
  double a = std::abs(seconds);
  if (a < 1) return FormatFixed(seconds * 1e3, 0) + " ms";
  if (a < 120) return FormatFixed(seconds, 1) + " s";
  if (a < 7200) return FormatFixed(seconds / 60, 1) + " min";
  return FormatFixed(seconds / 3600, 1) + " h";
}

std::string FormatObjectSampling(int64_t period) {
  if (period <= 1) return "every object (exact)";
  return "1 in " + std::to_string(period) + " objects";
}

size_t RowsShown(size_t available, size_t top) {
  return top == 0 ? available : std::min(top, available);
}

}  // namespace heaprec::render
