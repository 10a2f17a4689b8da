// Aggregation of a profile's samples per function and per stack: the report (the top table).
#include "analysis/report.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <tuple>
#include <utility>

#include "schema/profile_schema.h"

namespace heaprec::analysis {

using profile::Profile;
using profile::Sample;

bool IsEntryPoint(const std::string& function) {
  return function == "main" || function.ends_with("::main") || function == "<main>";
}

Report ComputeReport(const Profile& p, const std::string& sample_index, bool with_stacks,
                     const ViewOptions& view_options) {
  size_t index = SelectSampleIndex(p, sample_index);
  const ProfileView view(p, view_options);
  Report r;
  r.header = HeaderOf(p);
  r.sample_type = p.sample_types[index];
  r.sampled = view.IsEstimate(index);
  std::vector<ReportRow> rows;
  rows.reserve(view.functions().size());
  for (const FrameId& id : view.functions()) {
    ReportRow row;
    static_cast<FrameId&>(row) = id;
    rows.push_back(std::move(row));
  }
  // seen[n] == sample number + 1 when node n was already counted in cum for that sample.
  std::vector<size_t> seen(rows.size(), 0);
  // Per row, the lines its flat and its cum were counted at.
  std::vector<LineTally> flat_lines(rows.size()), cum_lines(rows.size());
  // By (row, line) of each frame, leaf first.
  std::map<std::vector<std::pair<size_t, int64_t>>, ReportStack> stacks;
  std::map<std::string, ReportClass> classes;
  bool has_classes = false;
  std::vector<std::pair<size_t, int64_t>> frames;
  std::vector<LocationFrame> stack;
  for (const Sample& s : p.samples) {
    if (index >= s.values.size()) continue;
    int64_t v = s.values[index];
    double var = r.sampled ? view.Variance(s, index) : 0.0;
    r.total += v;
    r.total_variance += var;
    ++r.samples;
    const std::string* class_name = StringLabel(s, schema::kClassLabel);
    has_classes = has_classes || class_name != nullptr;
    ReportClass& by_class = classes[class_name != nullptr ? *class_name : "(unknown)"];
    by_class.value += v;
    by_class.variance += var;
    frames.clear();
    view.SiteStack(s, stack);
    for (const LocationFrame& frame : stack) {
      size_t n = frame.function;
      if (frames.empty()) {
        rows[n].flat += v;
        rows[n].flat_variance += var;
        flat_lines[n].Add(frame.line, v);
      }
      frames.emplace_back(n, frame.line);
      if (seen[n] != r.samples) {
        seen[n] = r.samples;
        rows[n].cum += v;
        rows[n].cum_variance += var;
        cum_lines[n].Add(frame.line, v);
      }
    }
    if (with_stacks) {
      ReportStack& stack = stacks[frames];
      stack.value += v;
      stack.variance += var;
    }
  }
  // Rows that hold nothing are dropped, unless a stack that holds something goes through them
  // (possible only when positive and negative values cancel, as in a diff profile).
  std::vector<bool> keep(rows.size(), false);
  for (size_t n = 0; n < rows.size(); ++n) {
    ReportRow& row = rows[n];
    keep[n] = row.flat != 0 || row.cum != 0;
    if (!view_options.lines)
      row.line = (row.flat != 0 ? flat_lines : cum_lines)[n].Heaviest(row.line);
    row.context = row.flat == 0 &&
                  (row.runtime || (view_options.sites.defaults() && IsEntryPoint(row.function)));
  }
  for (auto& [key, stack] : stacks) {
    if (stack.value == 0) continue;
    for (const auto& [n, line] : key) keep[n] = true;
  }
  std::vector<size_t> order;
  for (size_t n = 0; n < rows.size(); ++n) {
    if (keep[n]) order.push_back(n);
  }
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    const ReportRow& a = rows[x];
    const ReportRow& b = rows[y];
    if (std::llabs(a.flat) != std::llabs(b.flat)) return std::llabs(a.flat) > std::llabs(b.flat);
    if (std::llabs(a.cum) != std::llabs(b.cum)) return std::llabs(a.cum) > std::llabs(b.cum);
    if (a.function != b.function) return a.function < b.function;
    return a.key < b.key;
  });
  std::vector<size_t> new_index(rows.size(), SIZE_MAX);
  r.rows.reserve(order.size());
  for (size_t n : order) {
    new_index[n] = r.rows.size();
    r.rows.push_back(std::move(rows[n]));
  }
  for (auto& [key, stack] : stacks) {
    if (stack.value == 0) continue;
    for (const auto& [n, line] : key) {
      stack.frames.push_back(new_index[n]);
      stack.lines.push_back(line);
    }
    r.stacks.push_back(std::move(stack));
  }
  std::sort(r.stacks.begin(), r.stacks.end(), [](const ReportStack& a, const ReportStack& b) {
    if (std::llabs(a.value) != std::llabs(b.value))
      return std::llabs(a.value) > std::llabs(b.value);
    return std::tie(a.frames, a.lines) < std::tie(b.frames, b.lines);
  });
  if (has_classes) {
    for (auto& [name, c] : classes) {
      if (c.value == 0) continue;
      c.name = name;
      r.classes.push_back(std::move(c));
    }
    // Stable on the map's name order: ties stay by name.
    std::stable_sort(r.classes.begin(), r.classes.end(),
                     [](const ReportClass& a, const ReportClass& b) {
                       return std::llabs(a.value) > std::llabs(b.value);
                     });
  }
  return r;
}

}  // namespace heaprec::analysis
