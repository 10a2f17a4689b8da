#include "render/folded.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analysis/report.h"
#include "render/utf8.h"

namespace heaprec::render {
namespace {

using analysis::Report;
using analysis::ReportStack;

// A line's values: NEW's (the only one outside a difference) and BASE's.
struct FoldedValues {
  int64_t next = 0;
  int64_t base = 0;
};

// The stack as a folded line's text: root first.
std::string StackText(const Report& r, const ReportStack& stack) {
  if (stack.frames.empty()) return "[unknown]";
  std::string text;
  for (auto it = stack.frames.rbegin(); it != stack.frames.rend(); ++it) {
    if (!text.empty()) text += ';';
    text += FoldedFrameName(r.rows[*it].DisplayName());
  }
  return text;
}

// Adds the report's stacks to `lines`, into NEW's or BASE's value.
void AddStacks(const Report& r, bool base, std::map<std::string, FoldedValues>& lines) {
  for (const ReportStack& stack : r.stacks) {
    FoldedValues& values = lines[StackText(r, stack)];
    (base ? values.base : values.next) += stack.value;
  }
}

}  // namespace
std::string FoldedFrameName(const std::string& name) {
  std::string out;
  out.reserve(name.size());
  for (size_t i = 0; i < name.size();) {
    unsigned char c = static_cast<unsigned char>(name[i]);
    size_t len = Utf8SequenceLength(name, i);
    if (len == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
      continue;
    }
    if (c == ';') {
      out += ':';
    } else if (c < 0x20 || c == 0x7f) {
      out += ' ';
    } else {
      out.append(name, i, len);
    }
    i += len;
  }
  return out;
}

void PrintFolded(const analysis::StackReports& stacks, std::ostream& out) {
  const bool difference = stacks.base.has_value();
  std::map<std::string, FoldedValues> lines;  // by text: equal texts merge
  AddStacks(stacks.next, /*base=*/false, lines);
  if (difference) AddStacks(*stacks.base, /*base=*/true, lines);
  std::vector<std::pair<const std::string*, FoldedValues>> order;
  for (const auto& [text, values] : lines) {
    if (values.next < 0 || values.base < 0) {
      throw FoldedValueError(
          "folded stacks cannot hold negative values (" +
          std::to_string(std::min(values.next, values.base)) + " at " + text + ")" +
          (difference ? ""
                      : "; only a difference profile (BASE's samples labelled "
                        "pprof::base=true, as heaprec diff -o writes it) can have them"));
    }
    if (values.next == 0 && values.base == 0) continue;
    order.emplace_back(&text, values);
  }
  // Heaviest first: by NEW's value, or in a difference by the change. Stable on the text order.
  auto weight = [difference](const FoldedValues& v) {
    return difference ? std::llabs(v.next - v.base) : v.next;
  };
  std::stable_sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    return weight(a.second) > weight(b.second);
  });
  for (const auto& [text, values] : order) {
    out << *text << ' ';
    if (difference) out << values.base << ' ';
    out << values.next << '\n';
  }
}

}  // namespace heaprec::render
