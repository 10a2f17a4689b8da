// Comparison of two heap profiles: per-function and per-stack changes with their noise, and the
// pprof diff profile.
#include "analysis/diff.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <string_view>
#include <unordered_map>

#include "profile/sampling_error.h"
#include "schema/profile_schema.h"

namespace heaprec::analysis {
namespace {

using profile::Function;
using profile::Line;
using profile::Location;
using profile::Mapping;
using profile::Profile;
using profile::Sample;
using profile::ValueType;

std::string DescribeTypes(const Profile& p) {
  std::string s;
  for (const ValueType& vt : p.sample_types) s += (s.empty() ? "" : ", ") + vt.type + "/" + vt.unit;
  return s.empty() ? "none" : s;
}

int64_t AbsChange(const DiffValue& v) { return std::llabs(v.change()); }

// Decreasing |change|, then the larger share of the change first (growth before shrinkage of the
// same size), then by `label` for a stable order.
template <typename T, typename GetValue, typename GetLabel>
void SortByChange(std::vector<T>& entries, GetValue value, GetLabel label) {
  std::sort(entries.begin(), entries.end(), [&](const T& a, const T& b) {
    const DiffValue& x = value(a);
    const DiffValue& y = value(b);
    if (AbsChange(x) != AbsChange(y)) return AbsChange(x) > AbsChange(y);
    if (x.change() != y.change()) return x.change() > y.change();
    return label(a) < label(b);
  });
}

// The rows of a stack's frames, each with the line it is at in that stack.
std::vector<ReportRow> StackFrames(const Report& report, const ReportStack& stack) {
  std::vector<ReportRow> frames;
  for (size_t i = 0; i < stack.frames.size(); ++i) {
    frames.push_back(report.rows[stack.frames[i]]);
    if (stack.lines[i] > 0) frames.back().line = stack.lines[i];
  }
  return frames;
}

std::string StackKey(const std::vector<ReportRow>& frames) {
  std::string key;
  for (const ReportRow& row : frames) {
    key += row.key;
    key += '\x1f';
    key += std::to_string(row.line);
    key += '\x1f';
  }
  return key;
}

std::string StackLabel(const DiffStack& s) {
  std::string label;
  for (const ReportRow& row : s.frames) label += row.Label() + "\n";
  return label;
}

// Copies the mappings, functions, locations and samples of the profiles into one, merging equal
// entries and giving them fresh ids.
class Merger {
 public:
  explicit Merger(Profile* out) : out_(*out) {}

  void Add(const Profile& p, bool negate_as_base) {
    std::unordered_map<uint64_t, uint64_t> mapping_ids, function_ids, location_ids;
    for (const Mapping& m : p.mappings) {
      std::string key = Key(m.memory_start, m.memory_limit, m.file_offset, m.filename, m.build_id);
      mapping_ids[m.id] = Intern(mappings_, key, out_.mappings, m);
    }
    for (const Function& f : p.functions) {
      std::string key = Key(f.name, f.system_name, f.filename, f.start_line);
      function_ids[f.id] = Intern(functions_, key, out_.functions, f);
    }
    for (const Location& l : p.locations) {
      Location copy = l;
      copy.mapping_id = l.mapping_id == 0 ? 0 : Lookup(mapping_ids, l.mapping_id);
      std::string key = Key(copy.mapping_id, copy.address, copy.is_folded ? 1 : 0);
      for (Line& line : copy.lines) {
        line.function_id = Lookup(function_ids, line.function_id);
        key += Key(line.function_id, line.line);
      }
      location_ids[l.id] = Intern(locations_, key, out_.locations, copy);
    }
    for (const Sample& s : p.samples) {
      Sample copy = s;
      for (uint64_t& id : copy.location_ids) id = Lookup(location_ids, id);
      if (negate_as_base) {
        for (int64_t& v : copy.values) v = v == std::numeric_limits<int64_t>::min() ? -v - 1 : -v;
        copy.labels.push_back({.key = schema::kPprofBaseLabel, .str = "true"});
      }
      out_.samples.push_back(std::move(copy));
    }
  }

 private:
  template <typename... Parts>
  static std::string Key(const Parts&... parts) {
    std::string key;
    ((key += ToString(parts), key += '\0'), ...);
    return key;
  }
  static std::string ToString(const std::string& s) { return s; }
  template <typename T>
  static std::string ToString(T v) {
    return std::to_string(v);
  }

  static uint64_t Lookup(const std::unordered_map<uint64_t, uint64_t>& ids, uint64_t id) {
    auto it = ids.find(id);
    return it == ids.end() ? 0 : it->second;
  }

  template <typename T>
  static uint64_t Intern(std::unordered_map<std::string, uint64_t>& index, const std::string& key,
                         std::vector<T>& table, const T& entry) {
    auto [it, inserted] = index.try_emplace(key, table.size() + 1);
    if (inserted) {
      table.push_back(entry);
      table.back().id = it->second;
    }
    return it->second;
  }

  Profile& out_;
  std::unordered_map<std::string, uint64_t> mappings_, functions_, locations_;
};

}  // namespace

double DiffValue::noise() const {
  double variance = base_variance + next_variance;
  if (!std::isfinite(variance)) return std::numeric_limits<double>::quiet_NaN();
  return profile::Confidence95(0.0, variance).high;
}

Significance DiffValue::significance() const {
  double bound = noise();
  if (!std::isfinite(bound)) return Significance::kUnknown;
  return static_cast<double>(AbsChange(*this)) > bound ? Significance::kSignificant
                                                       : Significance::kNoise;
}

void CheckCompatible(const Profile& base, const Profile& next) {
  if (base.sample_types != next.sample_types) {
    throw IncompatibleProfilesError("the profiles are not comparable: BASE has sample types " +
                                    DescribeTypes(base) + " but NEW has " + DescribeTypes(next));
  }
  if (base.period_type != next.period_type) {
    throw IncompatibleProfilesError("the profiles are not comparable: BASE has period type " +
                                    base.period_type.type + "/" + base.period_type.unit +
                                    " but NEW has " + next.period_type.type + "/" +
                                    next.period_type.unit);
  }
}

Diff ComputeDiff(const Profile& base, const Profile& next, const std::string& sample_index,
                 const ViewOptions& view_options) {
  CheckCompatible(base, next);
  Report rn = ComputeReport(next, sample_index, /*with_stacks=*/true, view_options);
  Report rb = ComputeReport(base, rn.sample_type.type, /*with_stacks=*/true, view_options);
  Diff d;
  d.sample_type = rn.sample_type;
  d.sampled = rn.sampled || rb.sampled;
  d.base_header = rb.header;
  d.next_header = rn.header;
  d.total = {rb.total, rn.total, rb.total_variance, rn.total_variance};

  std::map<std::string, DiffFunction> functions;
  for (const ReportRow& row : rn.rows) {
    DiffFunction& f = functions[row.key];
    f.row = row;
    f.flat.next = row.flat;
    f.flat.next_variance = row.flat_variance;
    f.cum.next = row.cum;
    f.cum.next_variance = row.cum_variance;
  }
  for (const ReportRow& row : rb.rows) {
    auto [it, inserted] = functions.try_emplace(row.key);
    DiffFunction& f = it->second;
    if (inserted) f.row = row;
    f.row.context = f.row.context && row.context;
    f.flat.base = row.flat;
    f.flat.base_variance = row.flat_variance;
    f.cum.base = row.cum;
    f.cum.base_variance = row.cum_variance;
  }
  d.functions = functions.size();
  for (auto& [key, f] : functions) {
    if (f.row.context) continue;
    if (f.cum.change() != 0) d.by_cum.push_back(f);
    if (f.flat.change() != 0) d.by_flat.push_back(f);
  }
  auto label = [](const DiffFunction& f) { return f.row.Label() + '\0' + f.row.key; };
  SortByChange(
      d.by_cum, [](const DiffFunction& f) -> const DiffValue& { return f.cum; }, label);
  SortByChange(
      d.by_flat, [](const DiffFunction& f) -> const DiffValue& { return f.flat; }, label);

  std::map<std::string, DiffStack> stacks;
  for (const ReportStack& s : rn.stacks) {
    std::vector<ReportRow> frames = StackFrames(rn, s);
    DiffStack& entry = stacks[StackKey(frames)];
    entry.frames = std::move(frames);
    entry.value.next = s.value;
    entry.value.next_variance = s.variance;
  }
  for (const ReportStack& s : rb.stacks) {
    std::vector<ReportRow> frames = StackFrames(rb, s);
    auto [it, inserted] = stacks.try_emplace(StackKey(frames));
    if (inserted) it->second.frames = std::move(frames);
    it->second.value.base = s.value;
    it->second.value.base_variance = s.variance;
  }
  for (auto& [key, s] : stacks) {
    if (s.value.change() != 0) d.stacks.push_back(std::move(s));
  }
  SortByChange(
      d.stacks, [](const DiffStack& s) -> const DiffValue& { return s.value; }, StackLabel);
  return d;
}

Profile MakeDiffProfile(const Profile& base, const Profile& next) {
  CheckCompatible(base, next);
  Profile out;
  out.sample_types = next.sample_types;
  out.period_type = next.period_type;
  out.period = std::max(base.period, next.period);  // as pprof's merge does
  out.default_sample_type =
      next.default_sample_type.empty() ? base.default_sample_type : next.default_sample_type;
  out.drop_frames = next.drop_frames;
  out.keep_frames = next.keep_frames;
  out.time_nanos = next.time_nanos;
  out.duration_nanos = next.duration_nanos;
  out.comments.push_back(
      "heaprec diff: NEW minus BASE; BASE's samples are negated and labelled "
      "pprof::base=true");
  for (const std::string& c : next.comments) out.comments.push_back("new: " + c);
  for (const std::string& c : base.comments) out.comments.push_back("base: " + c);
  Merger merger(&out);
  merger.Add(next, /*negate_as_base=*/false);
  merger.Add(base, /*negate_as_base=*/true);
  return out;
}

}  // namespace heaprec::analysis
