#include "render/diff.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "analysis/diff.h"
#include "render/format.h"
#include "render/json_fields.h"
#include "render/json_writer.h"
#include "render/utf8.h"

namespace heaprec::render {
namespace {

using analysis::Diff;
using analysis::DiffFunction;
using analysis::DiffStack;
using analysis::DiffValue;
using analysis::ReportRow;
using analysis::Significance;

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

std::string SourceLine(const std::string& name, const std::string& source,
                       const analysis::ProfileHeader& p) {
  std::string line = name + (source.empty() ? "(unnamed)" : source);
  if (p.period == 1) {
    line += " (exact)";
  } else if (p.period > 1 && p.per_object) {
    line += " (sampled " + FormatObjectSampling(p.period) + ")";
  } else if (p.period > 1) {
    line += " (sampling interval " + FormatValue(p.period, p.period_type.unit) + ")";
  }
  return line + "\n";
}

void PrintFunctions(const Diff& d, const std::vector<DiffFunction>& entries, bool cum, size_t top,
                    std::ostream& out) {
  const std::string& unit = d.sample_type.unit;
  size_t shown = RowsShown(entries.size(), top);
  out << "\nFunctions by change in " << (cum ? "cum" : "flat") << " (top " << shown << " of "
      << entries.size() << " changed)\n";
  out << ColumnHeader(d.sampled, "function") << "\n";
  for (size_t i = 0; i < shown; ++i) {
    const DiffFunction& f = entries[i];
    out << Columns(cum ? f.cum : f.flat, d.sampled, unit) << "  " << f.row.Label() << "\n";
  }
}

void PrintStacks(const Diff& d, size_t top, std::ostream& out) {
  const std::string& unit = d.sample_type.unit;
  size_t shown = RowsShown(d.stacks.size(), top);
  out << "\nStacks by change (top " << shown << " of " << d.stacks.size()
      << " changed; leaf first)\n";
  out << ColumnHeader(d.sampled, "stack") << "\n";
  std::string indent((d.sampled ? 4 : 3) * kColumn + 2, ' ');
  for (size_t i = 0; i < shown; ++i) {
    const DiffStack& s = d.stacks[i];
    out << Columns(s.value, d.sampled, unit) << "  ";
    if (s.frames.empty()) out << "(no frames)\n";
    for (size_t f = 0; f < s.frames.size(); ++f) {
      out << (f == 0 ? "" : indent) << s.frames[f].Label() << "\n";
    }
  }
}

void PrintText(const Diff& d, const DiffOptions& o, std::ostream& out) {
  const std::string& unit = d.sample_type.unit;
  out << SourceLine("Base: ", o.base_source, d.base_header);
  out << SourceLine("New:  ", o.next_source, d.next_header);
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

void JsonSide(JsonWriter& j, const std::string& source, const analysis::ProfileHeader& p,
              int64_t total, double variance, bool sampled) {
  j.BeginObject();
  j.Key("file").String(source);
  j.Key("period").Int(p.period);
  j.Key("total").Int(total);
  WriteIntervalFields(j, "total", sampled, total, variance);
  j.EndObject();
}

void JsonFunctions(JsonWriter& j, const Diff& d, const std::vector<DiffFunction>& entries, bool cum,
                   size_t top) {
  j.BeginArray();
  for (size_t i = 0; i < RowsShown(entries.size(), top); ++i) {
    j.BeginObject();
    WriteFrameFields(j, entries[i].row);
    JsonValue(j, cum ? entries[i].cum : entries[i].flat, d.sampled);
    j.EndObject();
  }
  j.EndArray();
}

void PrintJson(const Diff& d, const DiffOptions& o, std::ostream& out) {
  JsonWriter j(out);
  j.BeginObject();
  j.Key("base");
  JsonSide(j, o.base_source, d.base_header, d.total.base, d.total.base_variance,
           d.sampled && d.base_header.sampled());
  j.Key("new");
  JsonSide(j, o.next_source, d.next_header, d.total.next, d.total.next_variance,
           d.sampled && d.next_header.sampled());
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
  for (size_t i = 0; i < RowsShown(d.stacks.size(), o.top); ++i) {
    const DiffStack& s = d.stacks[i];
    j.BeginObject();
    j.Key("frames").BeginArray();
    for (const ReportRow& row : s.frames) {
      j.BeginObject();
      WriteFrameFields(j, row);
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

}  // namespace

void PrintDiff(const Diff& diff, const DiffOptions& options, std::ostream& out) {
  if (options.format == Format::kJson) {
    PrintJson(diff, options, out);
  } else {
    PrintText(diff, options, out);
  }
}

}  // namespace heaprec::render
