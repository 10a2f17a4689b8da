#include "cli/suggest.h"

#include <algorithm>

namespace heaprec::cli {
namespace {

std::string_view WithoutDashes(std::string_view s) {
  return s.substr(std::min(s.find_first_not_of('-'), s.size()));
}

size_t AllowedEdits(size_t length) { return length <= 5 ? 1 : length <= 8 ? 2 : 3; }

}  // namespace

size_t EditDistance(std::string_view a, std::string_view b) {
  // d[i][j]: distance between a's first i characters and b's first j, kept in three rows.
  std::vector<size_t> before(b.size() + 1), previous(b.size() + 1), row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({previous[j] + 1, row[j - 1] + 1, substitution});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        row[j] = std::min(row[j], before[j - 2] + 1);
      }
    }
    before.swap(previous);
    previous.swap(row);
  }
  return previous[b.size()];
}

std::optional<std::string> ClosestMatch(std::string_view typed,
                                        const std::vector<std::string>& candidates) {
  std::string_view word = WithoutDashes(typed);
  if (word.size() < 2) return std::nullopt;
  std::optional<std::string> best;
  size_t best_distance = AllowedEdits(word.size()) + 1;
  for (const std::string& candidate : candidates) {
    std::string_view name = WithoutDashes(candidate);
    if (name.size() < 2) continue;
    size_t distance = EditDistance(word, name);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

}  // namespace heaprec::cli
