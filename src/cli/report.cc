// Aggregation of samples per function and the text/JSON rendering of the top report.
#include "cli/report.h"

#include <algorithm>
#include <cinttypes>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <map>
#include <unordered_map>

#include "cli/json_writer.h"
#include "cli/text_format.h"
#include "profile/sampling_error.h"

namespace heaprec::cli {
namespace {

// Assigns every location its report rows (nodes), innermost frame first.
class NodeTable {
 public:
  explicit NodeTable(const Profile& p) {
    std::unordered_map<uint64_t, const Function*> functions;
    for (const Function& f : p.functions) functions[f.id] = &f;
    std::unordered_map<uint64_t, const Mapping*> mappings;
    for (const Mapping& m : p.mappings) mappings[m.id] = &m;
    for (const Location& loc : p.locations) {
      std::vector<size_t>& nodes = by_location_[loc.id];
      for (const Line& line : loc.lines) {
        auto it = functions.find(line.function_id);
        if (it == functions.end()) continue;
        const Function& f = *it->second;
        // Rows are per function (name + file), merging duplicate Function entries.
        size_t n = Intern("f:" + f.name + '\0' + f.filename, [&](const std::string& key) {
          ReportRow row;
          row.key = key;
          row.function = f.name.empty() ? f.system_name : f.name;
          row.file = f.filename;
          row.line = f.start_line;
          return row;
        });
        nodes.push_back(n);
        // A Ruby function has no start line, only the lines its frames were at: the smallest one
        // points the reader at the function as a start line would.
        if (line_from_locations_[n] && line.line > 0) {
          int64_t& shown = rows_[n].line;
          shown = shown == 0 ? line.line : std::min(shown, line.line);
        }
      }
      if (nodes.empty()) {
        // Unsymbolized: one row per address, as pprof shows them.
        auto mit = mappings.find(loc.mapping_id);
        std::string mapping = mit == mappings.end() ? "" : BaseName(mit->second->filename);
        nodes.push_back(
            Intern("a:" + mapping + '\0' + HexAddress(loc.address), [&](const std::string& key) {
              ReportRow row;
              row.key = key;
              row.function = row.address = HexAddress(loc.address);
              row.mapping = mapping;
              return row;
            }));
      }
    }
  }

  const std::vector<size_t>* Nodes(uint64_t location_id) const {
    auto it = by_location_.find(location_id);
    return it == by_location_.end() ? nullptr : &it->second;
  }
  std::vector<ReportRow>& rows() { return rows_; }

 private:
  template <typename MakeRow>
  size_t Intern(const std::string& key, MakeRow make_row) {
    auto [it, inserted] = index_.try_emplace(key, rows_.size());
    if (inserted) {
      rows_.push_back(make_row(key));
      line_from_locations_.push_back(rows_.back().line <= 0 && rows_.back().address.empty());
    }
    return it->second;
  }

  std::unordered_map<std::string, size_t> index_;
  std::unordered_map<uint64_t, std::vector<size_t>> by_location_;
  std::vector<ReportRow> rows_;
  std::vector<bool> line_from_locations_;  // per row: its function has no start line
};

double Percent(int64_t part, int64_t total) {
  return total == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(total);
}

std::string FormatPercent(double pct) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", pct);
  return buf;
}

// The variance model of one sample index: the profile's sampling model, and which value pair gives
// a sample's object size when it has no `bytes` label.
class VarianceModel {
 public:
  VarianceModel(const Profile& p, size_t index)
      : model_(p), type_(p.sample_types[index].type), index_(index) {
    const std::string& type = type_;
    std::string prefix = type.rfind("alloc_", 0) == 0 ? "alloc_" : "inuse_";
    for (size_t i = 0; i < p.sample_types.size(); ++i) {
      if (p.sample_types[i].type == prefix + "space") space_ = i;
      if (p.sample_types[i].type == prefix + "objects") objects_ = i;
    }
  }

  double Variance(const Sample& s) const {
    int64_t value = s.values[index_];
    if (value == 0) return 0.0;
    int64_t size = SampleObjectSize(s);
    if (size < 0 && space_ < s.values.size() && objects_ < s.values.size() &&
        s.values[objects_] != 0) {
      size = std::llround(static_cast<double>(s.values[space_]) /
                          static_cast<double>(s.values[objects_]));
    }
    // Sampled per object, a count's variance does not depend on the size.
    bool needs_size = !(model_.per_object && IsObjectCountType(type_));
    if (size < 0 && needs_size) return std::numeric_limits<double>::quiet_NaN();
    return ValueVariance(type_, value, size, model_);
  }

 private:
  SamplingModel model_;
  std::string type_;
  size_t index_;
  size_t space_ = SIZE_MAX;
  size_t objects_ = SIZE_MAX;
};

// Column widths of the text report: values, and (sampled) "±" + the 95% margin ("±1023.9 KiB").
constexpr size_t kValueWidth = 11;
constexpr size_t kMarginWidth = 12;

void PrintText(const Profile& p, const Report& r, const ReportOptions& o, size_t shown,
               std::ostream& out) {
  const std::string& unit = r.sample_type.unit;
  if (!o.source.empty()) out << "File: " << o.source << "\n";
  out << "Sample index: " << r.sample_type.type << " (" << unit << ")\n";
  out << "Total: " << FormatValue(r.total, unit) << " in " << r.samples << " samples";
  if (r.sampled) out << " (" << FormatMargin(r.total_variance, unit) << " at 95%)";
  out << "\n";
  if (SamplingModel(p).per_object) {
    out << "Sampling: " << FormatObjectSampling(p.period) << "\n";
  } else if (p.period > 0) {
    out << "Sampling interval: " << FormatValue(p.period, p.period_type.unit);
    if (!p.period_type.type.empty()) out << " of " << p.period_type.type;
    out << "\n";
  }
  if (!p.comments.empty()) {
    out << "Comments:";
    for (const std::string& c : p.comments) out << " " << c;
    out << "\n";
  }
  out << "Showing top " << shown << " of " << r.rows.size() << " functions";
  if (r.sampled) out << " (±: 95% interval)";
  out << "\n";
  out << PadLeft("flat", kValueWidth);
  if (r.sampled) out << PadLeft("±", kMarginWidth);
  out << PadLeft("flat%", 8) << PadLeft("sum%", 8) << PadLeft("cum", kValueWidth);
  if (r.sampled) out << PadLeft("±", kMarginWidth);
  out << PadLeft("cum%", 8) << "  function\n";
  double sum = 0;
  for (size_t i = 0; i < shown; ++i) {
    const ReportRow& row = r.rows[i];
    sum += Percent(row.flat, r.total);
    out << PadLeft(FormatValue(row.flat, unit), kValueWidth);
    if (r.sampled) out << PadLeft(FormatMargin(row.flat_variance, unit), kMarginWidth);
    out << PadLeft(FormatPercent(Percent(row.flat, r.total)), 8) << PadLeft(FormatPercent(sum), 8)
        << PadLeft(FormatValue(row.cum, unit), kValueWidth);
    if (r.sampled) out << PadLeft(FormatMargin(row.cum_variance, unit), kMarginWidth);
    out << PadLeft(FormatPercent(Percent(row.cum, r.total)), 8) << "  " << RowLabel(row) << "\n";
  }
  if (r.classes.empty()) return;
  size_t classes = o.top == 0 ? r.classes.size() : std::min(o.top, r.classes.size());
  out << "\nShowing top " << classes << " of " << r.classes.size() << " classes\n";
  out << PadLeft("value", kValueWidth);
  if (r.sampled) out << PadLeft("±", kMarginWidth);
  out << PadLeft("%", 8) << "  class\n";
  for (size_t i = 0; i < classes; ++i) {
    const ReportClass& c = r.classes[i];
    out << PadLeft(FormatValue(c.value, unit), kValueWidth);
    if (r.sampled) out << PadLeft(FormatMargin(c.variance, unit), kMarginWidth);
    out << PadLeft(FormatPercent(Percent(c.value, r.total)), 8) << "  " << c.name << "\n";
  }
}

// The ends of the 95% interval as JSON numbers, rounded outwards to whole units; null when the
// report is exact or the variance unknown.
void JsonInterval(JsonWriter& j, const std::string& name, bool sampled, int64_t value,
                  double variance) {
  if (!sampled || !std::isfinite(variance)) {
    j.Key(name + "_low").Null();
    j.Key(name + "_high").Null();
    return;
  }
  Interval ci = Confidence95(static_cast<double>(value), variance);
  j.Key(name + "_low").Int(static_cast<int64_t>(std::floor(ci.low)));
  j.Key(name + "_high").Int(static_cast<int64_t>(std::ceil(ci.high)));
}

void PrintJson(const Profile& p, const Report& r, const ReportOptions& o, size_t shown,
               std::ostream& out) {
  JsonWriter j(out);
  j.BeginObject();
  j.Key("file").String(o.source);
  j.Key("sample_index").String(r.sample_type.type);
  j.Key("unit").String(r.sample_type.unit);
  // The confidence level of the *_low/*_high intervals; null (and the intervals too) when exact.
  j.Key("confidence");
  r.sampled ? j.Double(0.95) : j.Null();
  j.Key("total").Int(r.total);
  JsonInterval(j, "total", r.sampled, r.total, r.total_variance);
  j.Key("samples").Int(static_cast<int64_t>(r.samples));
  j.Key("period").Int(p.period);
  j.Key("period_type").BeginObject();
  j.Key("type").String(p.period_type.type);
  j.Key("unit").String(p.period_type.unit);
  j.EndObject();
  j.Key("comments").BeginArray();
  for (const std::string& c : p.comments) j.String(c);
  j.EndArray();
  j.Key("function_count").Int(static_cast<int64_t>(r.rows.size()));
  j.Key("rows").BeginArray();
  double sum = 0;
  for (size_t i = 0; i < shown; ++i) {
    const ReportRow& row = r.rows[i];
    sum += Percent(row.flat, r.total);
    j.BeginObject();
    j.Key("function").String(row.function);
    j.Key("file").String(row.file);
    j.Key("line").Int(row.line);
    j.Key("address");
    row.address.empty() ? j.Null() : j.String(row.address);
    j.Key("mapping");
    row.address.empty() ? j.Null() : j.String(row.mapping);
    j.Key("flat").Int(row.flat);
    JsonInterval(j, "flat", r.sampled, row.flat, row.flat_variance);
    j.Key("flat_percent").Double(Percent(row.flat, r.total));
    j.Key("sum_percent").Double(sum);
    j.Key("cum").Int(row.cum);
    JsonInterval(j, "cum", r.sampled, row.cum, row.cum_variance);
    j.Key("cum_percent").Double(Percent(row.cum, r.total));
    j.EndObject();
  }
  j.EndArray();
  if (!r.classes.empty()) {
    size_t classes = o.top == 0 ? r.classes.size() : std::min(o.top, r.classes.size());
    j.Key("class_count").Int(static_cast<int64_t>(r.classes.size()));
    j.Key("classes").BeginArray();
    for (size_t i = 0; i < classes; ++i) {
      const ReportClass& c = r.classes[i];
      j.BeginObject();
      j.Key("class").String(c.name);
      j.Key("value").Int(c.value);
      JsonInterval(j, "value", r.sampled, c.value, c.variance);
      j.Key("percent").Double(Percent(c.value, r.total));
      j.EndObject();
    }
    j.EndArray();
  }
  j.EndObject();
  out << "\n";
}

// Whether `type` is one of the values heaprec samples (and sampling_error.h models).
bool IsHeapSampleType(const std::string& type) {
  return IsByteCountType(type) || IsObjectCountType(type);
}

// The sample's `class` string label (Ruby profiles), or nullptr.
const std::string* SampleClass(const Sample& s) {
  for (const Label& label : s.labels) {
    if (label.key == "class" && !label.str.empty()) return &label.str;
  }
  return nullptr;
}

}  // namespace

size_t SelectSampleIndex(const Profile& p, const std::string& requested) {
  const std::string& wanted = requested.empty() ? p.default_sample_type : requested;
  for (size_t i = 0; i < p.sample_types.size(); ++i) {
    if (p.sample_types[i].type == wanted) return i;
  }
  if (requested.empty() && !p.sample_types.empty()) return p.sample_types.size() - 1;
  std::string known;
  for (const ValueType& vt : p.sample_types) known += (known.empty() ? "" : ", ") + vt.type;
  throw UnknownSampleIndexError("unknown sample index '" + wanted +
                                "'; this profile has: " + (known.empty() ? "none" : known));
}

Report ComputeReport(const Profile& p, const std::string& sample_index, bool with_stacks) {
  size_t index = SelectSampleIndex(p, sample_index);
  Report r;
  r.sample_type = p.sample_types[index];
  r.sampled = SamplingModel(p).sampled() && IsHeapSampleType(r.sample_type.type);
  VarianceModel model(p, index);
  NodeTable nodes(p);
  std::vector<ReportRow>& rows = nodes.rows();
  // seen[n] == sample number + 1 when node n was already counted in cum for that sample.
  std::vector<size_t> seen(rows.size(), 0);
  std::map<std::vector<size_t>, ReportStack> stacks;
  std::map<std::string, ReportClass> classes;
  bool has_classes = false;
  std::vector<size_t> frames;
  for (const Sample& s : p.samples) {
    if (index >= s.values.size()) continue;
    int64_t v = s.values[index];
    double var = r.sampled ? model.Variance(s) : 0.0;
    r.total += v;
    r.total_variance += var;
    ++r.samples;
    const std::string* class_name = SampleClass(s);
    has_classes = has_classes || class_name != nullptr;
    ReportClass& by_class = classes[class_name != nullptr ? *class_name : "(unknown)"];
    by_class.value += v;
    by_class.variance += var;
    bool leaf = true;
    frames.clear();
    for (uint64_t location_id : s.location_ids) {
      const std::vector<size_t>* ids = nodes.Nodes(location_id);
      if (ids == nullptr) continue;
      for (size_t n : *ids) {
        frames.push_back(n);
        if (leaf) {
          rows[n].flat += v;
          rows[n].flat_variance += var;
        }
        leaf = false;
        if (seen[n] != r.samples) {
          seen[n] = r.samples;
          rows[n].cum += v;
          rows[n].cum_variance += var;
        }
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
  for (size_t n = 0; n < rows.size(); ++n) keep[n] = rows[n].flat != 0 || rows[n].cum != 0;
  for (auto& [key, stack] : stacks) {
    if (stack.value == 0) continue;
    for (size_t n : key) keep[n] = true;
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
    for (size_t n : key) stack.frames.push_back(new_index[n]);
    r.stacks.push_back(std::move(stack));
  }
  std::sort(r.stacks.begin(), r.stacks.end(), [](const ReportStack& a, const ReportStack& b) {
    if (std::llabs(a.value) != std::llabs(b.value))
      return std::llabs(a.value) > std::llabs(b.value);
    return a.frames < b.frames;
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

std::string RowLabel(const ReportRow& row) {
  if (!row.address.empty()) {
    return row.mapping.empty() ? row.function : row.function + " (" + row.mapping + ")";
  }
  if (row.file.empty()) return row.function;
  std::string label = row.function + " " + BaseName(row.file);
  if (row.line > 0) label += ":" + std::to_string(row.line);
  return label;
}

std::string FormatObjectSampling(int64_t period) {
  if (period <= 1) return "every object (exact)";
  return "1 in " + std::to_string(period) + " objects";
}

std::string PadLeft(const std::string& s, size_t width) {
  size_t columns = 0;
  for (char c : s) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++columns;  // not a continuation byte
  }
  return columns >= width ? s : std::string(width - columns, ' ') + s;
}

std::string FormatValue(int64_t value, const std::string& unit) {
  char buf[64];
  if (unit == "bytes") {
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
  if (unit.empty() || unit == "count") return buf;
  return std::string(buf) + " " + unit;
}

std::string FormatMargin(double variance, const std::string& unit) {
  if (!std::isfinite(variance)) return "±?";
  double half = Confidence95(0.0, variance).high;
  return "±" + FormatValue(std::llround(half), unit);
}

void PrintReport(const Profile& profile, const ReportOptions& options, std::ostream& out) {
  Report report = ComputeReport(profile, options.sample_index);
  size_t shown = options.top == 0 ? report.rows.size() : std::min(options.top, report.rows.size());
  if (options.format == ReportFormat::kJson) {
    PrintJson(profile, report, options, shown, out);
  } else {
    PrintText(profile, report, options, shown, out);
  }
}

}  // namespace heaprec::cli
