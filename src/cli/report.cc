// Aggregation of samples per function and the text/JSON rendering of the top report.
#include "cli/report.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <unordered_map>

#include "cli/json_writer.h"

namespace heaprec::cli {
namespace {

std::string Hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

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
        nodes.push_back(Intern("f:" + f.name + '\0' + f.filename, [&] {
          ReportRow row;
          row.function = f.name.empty() ? f.system_name : f.name;
          row.file = f.filename;
          row.line = f.start_line;
          return row;
        }));
      }
      if (nodes.empty()) {
        // Unsymbolized: one row per address, as pprof shows them.
        auto mit = mappings.find(loc.mapping_id);
        std::string mapping = mit == mappings.end() ? "" : BaseName(mit->second->filename);
        nodes.push_back(Intern("a:" + mapping + '\0' + Hex(loc.address), [&] {
          ReportRow row;
          row.function = row.address = Hex(loc.address);
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
    if (inserted) rows_.push_back(make_row());
    return it->second;
  }

  std::unordered_map<std::string, size_t> index_;
  std::unordered_map<uint64_t, std::vector<size_t>> by_location_;
  std::vector<ReportRow> rows_;
};

double Percent(int64_t part, int64_t total) {
  return total == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(total);
}

std::string FormatPercent(double pct) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", pct);
  return buf;
}

std::string PadLeft(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
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

void PrintText(const Profile& p, const Report& r, const ReportOptions& o, size_t shown,
               std::ostream& out) {
  const std::string& unit = r.sample_type.unit;
  if (!o.source.empty()) out << "File: " << o.source << "\n";
  out << "Sample index: " << r.sample_type.type << " (" << unit << ")\n";
  out << "Total: " << FormatValue(r.total, unit) << " in " << r.samples << " samples\n";
  if (p.period > 0) {
    out << "Sampling interval: " << FormatValue(p.period, p.period_type.unit);
    if (!p.period_type.type.empty()) out << " of " << p.period_type.type;
    out << "\n";
  }
  if (!p.comments.empty()) {
    out << "Comments:";
    for (const std::string& c : p.comments) out << " " << c;
    out << "\n";
  }
  out << "Showing top " << shown << " of " << r.rows.size() << " functions\n";
  out << PadLeft("flat", 11) << PadLeft("flat%", 8) << PadLeft("sum%", 8) << PadLeft("cum", 11)
      << PadLeft("cum%", 8) << "  function\n";
  double sum = 0;
  for (size_t i = 0; i < shown; ++i) {
    const ReportRow& row = r.rows[i];
    sum += Percent(row.flat, r.total);
    out << PadLeft(FormatValue(row.flat, unit), 11)
        << PadLeft(FormatPercent(Percent(row.flat, r.total)), 8) << PadLeft(FormatPercent(sum), 8)
        << PadLeft(FormatValue(row.cum, unit), 11)
        << PadLeft(FormatPercent(Percent(row.cum, r.total)), 8) << "  " << RowLabel(row) << "\n";
  }
}

void PrintJson(const Profile& p, const Report& r, const ReportOptions& o, size_t shown,
               std::ostream& out) {
  JsonWriter j(out);
  j.BeginObject();
  j.Key("file").String(o.source);
  j.Key("sample_index").String(r.sample_type.type);
  j.Key("unit").String(r.sample_type.unit);
  j.Key("total").Int(r.total);
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
    j.Key("flat_percent").Double(Percent(row.flat, r.total));
    j.Key("sum_percent").Double(sum);
    j.Key("cum").Int(row.cum);
    j.Key("cum_percent").Double(Percent(row.cum, r.total));
    j.EndObject();
  }
  j.EndArray();
  j.EndObject();
  out << "\n";
}

}  // namespace

Report ComputeReport(const Profile& p, const std::string& sample_index) {
  size_t index = SelectSampleIndex(p, sample_index);
  Report r;
  r.sample_type = p.sample_types[index];
  NodeTable nodes(p);
  std::vector<ReportRow>& rows = nodes.rows();
  // seen[n] == sample number + 1 when node n was already counted in cum for that sample.
  std::vector<size_t> seen(rows.size(), 0);
  for (const Sample& s : p.samples) {
    if (index >= s.values.size()) continue;
    int64_t v = s.values[index];
    r.total += v;
    ++r.samples;
    bool leaf = true;
    for (uint64_t location_id : s.location_ids) {
      const std::vector<size_t>* ids = nodes.Nodes(location_id);
      if (ids == nullptr) continue;
      for (size_t n : *ids) {
        if (leaf) rows[n].flat += v;
        leaf = false;
        if (seen[n] != r.samples) {
          seen[n] = r.samples;
          rows[n].cum += v;
        }
      }
    }
  }
  std::erase_if(rows, [](const ReportRow& row) { return row.flat == 0 && row.cum == 0; });
  std::sort(rows.begin(), rows.end(), [](const ReportRow& a, const ReportRow& b) {
    if (std::llabs(a.flat) != std::llabs(b.flat)) return std::llabs(a.flat) > std::llabs(b.flat);
    if (std::llabs(a.cum) != std::llabs(b.cum)) return std::llabs(a.cum) > std::llabs(b.cum);
    return a.function < b.function;
  });
  r.rows = std::move(rows);
  return r;
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
