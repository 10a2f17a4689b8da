#include "render/folded.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <vector>

#include "analysis/profile_view.h"
#include "analysis/report.h"
#include "render/utf8.h"
#include "schema/profile_schema.h"

namespace heaprec::render {
namespace {

using analysis::Report;
using analysis::ReportStack;
using profile::Profile;
using profile::Sample;

// A line's values: NEW's (the only one outside a difference) and BASE's.
struct FoldedValues {
  int64_t next = 0;
  int64_t base = 0;
};

bool IsBaseSample(const Sample& s) {
  const std::string* base = analysis::StringLabel(s, schema::kPprofBaseLabel);
  return base != nullptr && *base == "true";
}

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

// Adds the report's stacks of `profile` to `lines`, into NEW's or BASE's value.
void AddStacks(const Profile& profile, const std::string& sample_index,
               const analysis::ViewOptions& view, bool base,
               std::map<std::string, FoldedValues>& lines) {
  Report r = analysis::ComputeReport(profile, sample_index, /*with_stacks=*/true, view);
  for (const ReportStack& stack : r.stacks) {
    FoldedValues& values = lines[StackText(r, stack)];
    (base ? values.base : values.next) += stack.value;
  }
}

// `p` with only its BASE samples (`base`), their values negated back, or only its NEW ones.
Profile DifferenceSide(const Profile& p, bool base) {
  Profile side = p;
  side.samples.clear();
  for (const Sample& s : p.samples) {
    if (IsBaseSample(s) != base) continue;
    side.samples.push_back(s);
    if (base) {
      for (int64_t& v : side.samples.back().values) {
        v = v == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max() : -v;
      }
    }
  }
  return side;
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

void PrintFolded(const Profile& profile, const std::string& sample_index,
                 const analysis::ViewOptions& view, std::ostream& out) {
  // Throws UnknownSampleIndexError for the whole profile, before any side is computed.
  analysis::SelectSampleIndex(profile, sample_index);
  const bool difference = std::any_of(profile.samples.begin(), profile.samples.end(), IsBaseSample);
  std::map<std::string, FoldedValues> lines;  // by text: equal texts merge
  if (difference) {
    AddStacks(DifferenceSide(profile, /*base=*/false), sample_index, view, false, lines);
    AddStacks(DifferenceSide(profile, /*base=*/true), sample_index, view, true, lines);
  } else {
    AddStacks(profile, sample_index, view, false, lines);
  }
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
