#include "analysis/timeline.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string_view>
#include <type_traits>

#include "schema/profile_schema.h"

namespace heaprec::analysis {
namespace {

// Reads the decimal number at the start of `text`, up to `stop` or the end (signed if Number is),
// and advances `text` past it and `stop`.
template <typename Number>
bool ReadNumber(std::string_view& text, char stop, Number* value) {
  const std::size_t end = text.find(stop);
  const std::string digits(text.substr(0, end));
  if (digits.empty()) return false;
  char* parsed = nullptr;
  errno = 0;
  if constexpr (std::is_signed_v<Number>) {
    *value = std::strtoll(digits.c_str(), &parsed, 10);
  } else {
    if (digits[0] == '-') return false;
    *value = std::strtoull(digits.c_str(), &parsed, 10);
  }
  if (errno != 0 || *parsed != '\0') return false;
  text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  return true;
}

}  // namespace

double Timeline::Error(int64_t bytes) const {
  if (interval <= 1 || bytes <= 0) return 0;
  return 1.96 * std::sqrt(static_cast<double>(interval) * static_cast<double>(bytes));
}

bool IsTimelineComment(const std::string& comment) {
  return comment.rfind(schema::kTimelinePrefix, 0) == 0;
}

std::optional<Timeline> ParseTimeline(const std::string& comment) {
  if (!IsTimelineComment(comment)) return std::nullopt;
  std::string_view text(comment);
  text.remove_prefix(std::string_view(schema::kTimelinePrefix).size());
  // " start_ns=S interval=I peak_ms=P peak=B points=..."
  Timeline timeline;
  const std::size_t points_at = text.find(" points=");
  if (points_at == std::string_view::npos) return std::nullopt;
  std::string_view header = text.substr(0, points_at);
  std::string_view points = text.substr(points_at + 8);
  // Each " NAME=VALUE" of the header, in order.
  auto read_header = [&header](std::string_view name, auto* value) {
    if (header.substr(0, 1) != " ") return false;
    const std::string_view expected = name;
    if (header.substr(1, expected.size()) != expected ||
        header.substr(1 + expected.size(), 1) != "=")
      return false;
    header.remove_prefix(expected.size() + 2);
    const std::size_t end = header.find(' ');
    std::string_view digits = header.substr(0, end);
    header.remove_prefix(end == std::string_view::npos ? header.size() : end);
    return ReadNumber(digits, ' ', value);
  };
  if (!read_header("start_ns", &timeline.start_ns) ||
      !read_header("interval", &timeline.interval) || !read_header("peak_ms", &timeline.peak_ms) ||
      !read_header("peak", &timeline.peak) || !header.empty()) {
    return std::nullopt;
  }
  while (!points.empty()) {
    std::size_t end = points.find(';');
    std::string_view one = points.substr(0, end);
    points.remove_prefix(end == std::string_view::npos ? points.size() : end + 1);
    TimelinePoint p;
    if (!ReadNumber(one, ',', &p.t_ms) || !ReadNumber(one, ',', &p.live) ||
        !ReadNumber(one, ',', &p.max) || !ReadNumber(one, ',', &p.rss) ||
        !ReadNumber(one, ',', &p.allocated) || !one.empty()) {
      return std::nullopt;
    }
    if (!timeline.points.empty() && p.t_ms < timeline.points.back().t_ms) return std::nullopt;
    timeline.points.push_back(p);
  }
  if (timeline.points.empty()) return std::nullopt;
  return timeline;
}

}  // namespace heaprec::analysis
