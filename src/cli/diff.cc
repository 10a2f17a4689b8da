// Comparison of two heap profiles: per-function and per-stack changes with their noise, the text
// and JSON renderings, and the pprof diff profile.
#include "cli/diff.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <string_view>
#include <unordered_map>

#include "cli/json_writer.h"
#include "profile/sampling_error.h"

namespace heaprec::cli {
namespace {

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

std::string StackKey(const std::vector<ReportRow>& frames) {
  std::string key;
  for (const ReportRow& row : frames) {
    key += row.key;
    key += '\x1f';
  }
  return key;
}

std::string StackLabel(const DiffStack& s) {
  std::string label;
  for (const ReportRow& row : s.frames) label += RowLabel(row) + "\n";
  return label;
}

// "+1.5 MiB", "-2.0 KiB", "0 B".
std::string FormatChange(int64_t change, const std::string& unit) {
  return (change > 0 ? "+" : "") + FormatValue(change, unit);
}

char Marker(Significance s) {
  switch (s) {
    case Significance::kSignificant:
      return '*';
    case Significance::kNoise:
      return ' ';
    case Significance::kUnknown:
      return '?';
  }
  return '?';
}

const char* SignificanceName(Significance s) {
  switch (s) {
    case Significance::kSignificant:
      return "significant";
    case Significance::kNoise:
      return "noise";
    case Significance::kUnknown:
      return "unknown";
  }
  return "unknown";
}

constexpr size_t kColumn = 12;

// The numeric columns of a ranking line: marker, change, noise (sampled only), base, new.
std::string Columns(const DiffValue& v, bool sampled, const std::string& unit) {
  std::string line;
  if (sampled) line += Marker(v.significance());
  line += PadLeft(FormatChange(v.change(), unit), kColumn - (sampled ? 1 : 0));
  if (sampled) line += PadLeft(FormatMargin(v.base_variance + v.next_variance, unit), kColumn);
  line += PadLeft(FormatValue(v.base, unit), kColumn);
  line += PadLeft(FormatValue(v.next, unit), kColumn);
  return line;
}

std::string ColumnHeader(bool sampled, const std::string& what) {
  std::string line = PadLeft("change", kColumn);
  if (sampled) line += PadLeft("noise", kColumn);
  line += PadLeft("base", kColumn) + PadLeft("new", kColumn) + "  " + what;
  return line;
}

size_t Shown(size_t size, size_t top) { return top == 0 ? size : std::min(top, size); }

std::string SourceLine(const std::string& name, const std::string& source, const Profile& p) {
  std::string line = name + (source.empty() ? "(unnamed)" : source);
  if (p.period == 1) {
    line += " (exact)";
  } else if (p.period > 1 && SamplingModel(p).per_object) {
    line += " (sampled " + FormatObjectSampling(p.period) + ")";
  } else if (p.period > 1) {
    line += " (sampling interval " + FormatValue(p.period, p.period_type.unit) + ")";
  }
  return line + "\n";
}

void PrintFunctions(const Diff& d, const std::vector<DiffFunction>& entries, bool cum, size_t top,
                    std::ostream& out) {
  const std::string& unit = d.sample_type.unit;
  size_t shown = Shown(entries.size(), top);
  out << "\nFunctions by change in " << (cum ? "cum" : "flat") << " (top " << shown << " of "
      << entries.size() << " changed)\n";
  out << ColumnHeader(d.sampled, "function") << "\n";
  for (size_t i = 0; i < shown; ++i) {
    const DiffFunction& f = entries[i];
    out << Columns(cum ? f.cum : f.flat, d.sampled, unit) << "  " << RowLabel(f.row) << "\n";
  }
}

void PrintStacks(const Diff& d, size_t top, std::ostream& out) {
  const std::string& unit = d.sample_type.unit;
  size_t shown = Shown(d.stacks.size(), top);
  out << "\nStacks by change (top " << shown << " of " << d.stacks.size()
      << " changed; leaf first)\n";
  out << ColumnHeader(d.sampled, "stack") << "\n";
  std::string indent((d.sampled ? 4 : 3) * kColumn + 2, ' ');
  for (size_t i = 0; i < shown; ++i) {
    const DiffStack& s = d.stacks[i];
    out << Columns(s.value, d.sampled, unit) << "  ";
    if (s.frames.empty()) out << "(no frames)\n";
    for (size_t f = 0; f < s.frames.size(); ++f) {
      out << (f == 0 ? "" : indent) << RowLabel(s.frames[f]) << "\n";
    }
  }
}

void PrintText(const Profile& base, const Profile& next, const Diff& d, const DiffOptions& o,
               std::ostream& out) {
  const std::string& unit = d.sample_type.unit;
  out << SourceLine("Base: ", o.base_source, base);
  out << SourceLine("New:  ", o.next_source, next);
  out << "Sample index: " << d.sample_type.type << " (" << unit << ")\n";
  out << "Total: " << FormatValue(d.total.base, unit) << " -> " << FormatValue(d.total.next, unit)
      << ", change " << FormatChange(d.total.change(), unit);
  if (d.sampled) {
    out << " " << FormatMargin(d.total.base_variance + d.total.next_variance, unit) << " ("
        << SignificanceName(d.total.significance()) << ")";
  }
  out << "\n";
  if (d.sampled) {
    out << "* marks a change larger than sampling noise: |change| > noise = "
           "1.96·sqrt(Var base + Var new)\n";
  } else {
    out << "Both profiles are exact (sampling interval 1): every change is real\n";
  }
  PrintFunctions(d, d.by_cum, /*cum=*/true, o.top, out);
  PrintFunctions(d, d.by_flat, /*cum=*/false, o.top, out);
  PrintStacks(d, o.top, out);
}

void JsonRowNames(JsonWriter& j, const ReportRow& row) {
  j.Key("function").String(row.function);
  j.Key("file").String(row.file);
  j.Key("line").Int(row.line);
  j.Key("address");
  row.address.empty() ? j.Null() : j.String(row.address);
  j.Key("mapping");
  row.address.empty() ? j.Null() : j.String(row.mapping);
}

void JsonValue(JsonWriter& j, const DiffValue& v, bool sampled) {
  j.Key("base").Int(v.base);
  j.Key("new").Int(v.next);
  j.Key("change").Int(v.change());
  double noise = v.noise();
  j.Key("noise");
  if (sampled && std::isfinite(noise)) {
    j.Int(static_cast<int64_t>(std::ceil(noise)));
  } else {
    j.Null();
  }
  j.Key("significance").String(SignificanceName(v.significance()));
}

void JsonSide(JsonWriter& j, const std::string& source, const Profile& p, int64_t total,
              double variance, bool sampled) {
  j.BeginObject();
  j.Key("file").String(source);
  j.Key("period").Int(p.period);
  j.Key("total").Int(total);
  if (sampled && std::isfinite(variance)) {
    Interval ci = Confidence95(static_cast<double>(total), variance);
    j.Key("total_low").Int(static_cast<int64_t>(std::floor(ci.low)));
    j.Key("total_high").Int(static_cast<int64_t>(std::ceil(ci.high)));
  } else {
    j.Key("total_low").Null();
    j.Key("total_high").Null();
  }
  j.EndObject();
}

void JsonFunctions(JsonWriter& j, const Diff& d, const std::vector<DiffFunction>& entries, bool cum,
                   size_t top) {
  j.BeginArray();
  for (size_t i = 0; i < Shown(entries.size(), top); ++i) {
    j.BeginObject();
    JsonRowNames(j, entries[i].row);
    JsonValue(j, cum ? entries[i].cum : entries[i].flat, d.sampled);
    j.EndObject();
  }
  j.EndArray();
}

void PrintJson(const Profile& base, const Profile& next, const Diff& d, const DiffOptions& o,
               std::ostream& out) {
  JsonWriter j(out);
  j.BeginObject();
  j.Key("base");
  JsonSide(j, o.base_source, base, d.total.base, d.total.base_variance,
           d.sampled && SamplingModel(base).sampled());
  j.Key("new");
  JsonSide(j, o.next_source, next, d.total.next, d.total.next_variance,
           d.sampled && SamplingModel(next).sampled());
  j.Key("sample_index").String(d.sample_type.type);
  j.Key("unit").String(d.sample_type.unit);
  j.Key("confidence");
  d.sampled ? j.Double(0.95) : j.Null();
  j.Key("total").BeginObject();
  JsonValue(j, d.total, d.sampled);
  j.EndObject();
  j.Key("function_count").Int(static_cast<int64_t>(d.functions));
  j.Key("changed_by_cum").Int(static_cast<int64_t>(d.by_cum.size()));
  j.Key("changed_by_flat").Int(static_cast<int64_t>(d.by_flat.size()));
  j.Key("changed_stacks").Int(static_cast<int64_t>(d.stacks.size()));
  j.Key("functions_by_cum");
  JsonFunctions(j, d, d.by_cum, /*cum=*/true, o.top);
  j.Key("functions_by_flat");
  JsonFunctions(j, d, d.by_flat, /*cum=*/false, o.top);
  j.Key("stacks").BeginArray();
  for (size_t i = 0; i < Shown(d.stacks.size(), o.top); ++i) {
    const DiffStack& s = d.stacks[i];
    j.BeginObject();
    j.Key("frames").BeginArray();
    for (const ReportRow& row : s.frames) {
      j.BeginObject();
      JsonRowNames(j, row);
      j.EndObject();
    }
    j.EndArray();
    JsonValue(j, s.value, d.sampled);
    j.EndObject();
  }
  j.EndArray();
  j.EndObject();
  out << "\n";
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
        copy.labels.push_back({.key = "pprof::base", .str = "true"});
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
  return Confidence95(0.0, variance).high;
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

Diff ComputeDiff(const Profile& base, const Profile& next, const std::string& sample_index) {
  CheckCompatible(base, next);
  Report rn = ComputeReport(next, sample_index, /*with_stacks=*/true);
  Report rb = ComputeReport(base, rn.sample_type.type, /*with_stacks=*/true);
  Diff d;
  d.sample_type = rn.sample_type;
  d.sampled = rn.sampled || rb.sampled;
  d.base_period = base.period;
  d.next_period = next.period;
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
    f.flat.base = row.flat;
    f.flat.base_variance = row.flat_variance;
    f.cum.base = row.cum;
    f.cum.base_variance = row.cum_variance;
  }
  d.functions = functions.size();
  for (auto& [key, f] : functions) {
    if (f.cum.change() != 0) d.by_cum.push_back(f);
    if (f.flat.change() != 0) d.by_flat.push_back(f);
  }
  auto label = [](const DiffFunction& f) { return RowLabel(f.row) + '\0' + f.row.key; };
  SortByChange(
      d.by_cum, [](const DiffFunction& f) -> const DiffValue& { return f.cum; }, label);
  SortByChange(
      d.by_flat, [](const DiffFunction& f) -> const DiffValue& { return f.flat; }, label);

  std::map<std::string, DiffStack> stacks;
  for (const ReportStack& s : rn.stacks) {
    std::vector<ReportRow> frames;
    for (size_t n : s.frames) frames.push_back(rn.rows[n]);
    DiffStack& entry = stacks[StackKey(frames)];
    entry.frames = std::move(frames);
    entry.value.next = s.value;
    entry.value.next_variance = s.variance;
  }
  for (const ReportStack& s : rb.stacks) {
    std::vector<ReportRow> frames;
    for (size_t n : s.frames) frames.push_back(rb.rows[n]);
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

void PrintDiff(const Profile& base, const Profile& next, const DiffOptions& options,
               std::ostream& out) {
  Diff d = ComputeDiff(base, next, options.sample_index);
  if (options.format == ReportFormat::kJson) {
    PrintJson(base, next, d, options, out);
  } else {
    PrintText(base, next, d, options, out);
  }
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

}  // namespace heaprec::cli
