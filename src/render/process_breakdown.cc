#include "render/process_breakdown.h"

#include "render/format.h"
#include "render/json_fields.h"
#include "render/json_writer.h"
#include "render/utf8.h"

namespace heaprec::render {
namespace {

constexpr size_t kValueWidth = 12;
constexpr size_t kMarginWidth = 12;

void PrintText(const analysis::ProcessBreakdown& b, const ReportOptions& o, size_t shown,
               std::ostream& out) {
  const std::string& unit = b.sample_type.unit;
  if (!o.source.empty()) out << "File: " << o.source << "\n";
  out << "Sample index: " << b.sample_type.type << " (" << unit << ")\n";
  out << "Total: " << FormatValue(b.total, unit) << " in " << b.rows.size() << " process"
      << (b.rows.size() == 1 ? "" : "es");
  if (b.sampled) out << " (" << FormatMargin(b.total_variance, unit) << " at 95%)";
  out << "\nShowing top " << shown << " of " << b.rows.size() << " processes";
  if (b.sampled) out << " (±: 95% interval)";
  out << "\n" << PadLeft(b.sample_type.type, kValueWidth);
  if (b.sampled) out << PadLeft("±", kMarginWidth);
  out << PadLeft("share", 8) << "  process\n";
  for (size_t i = 0; i < shown; ++i) {
    const analysis::ProcessRow& row = b.rows[i];
    out << PadLeft(FormatValue(row.value, unit), kValueWidth);
    if (b.sampled) out << PadLeft(FormatMargin(row.variance, unit), kMarginWidth);
    out << PadLeft(FormatPercent(Percent(row.value, b.total)), 8) << "  " << row.label << "\n";
  }
}

void PrintJson(const analysis::ProcessBreakdown& b, const ReportOptions& o, size_t shown,
               std::ostream& out) {
  JsonWriter j(out);
  j.BeginObject();
  j.Key("file").String(o.source);
  j.Key("sample_index").String(b.sample_type.type);
  j.Key("unit").String(b.sample_type.unit);
  j.Key("confidence");
  b.sampled ? j.Double(0.95) : j.Null();
  j.Key("total").Int(b.total);
  WriteIntervalFields(j, "total", b.sampled, b.total, b.total_variance);
  j.Key("process_count").Int(static_cast<int64_t>(b.rows.size()));
  j.Key("processes").BeginArray();
  for (size_t i = 0; i < shown; ++i) {
    const analysis::ProcessRow& row = b.rows[i];
    j.BeginObject();
    j.Key("process").String(row.label);
    j.Key("value").Int(row.value);
    WriteIntervalFields(j, "value", b.sampled, row.value, row.variance);
    j.Key("share_percent").Double(Percent(row.value, b.total));
    j.EndObject();
  }
  j.EndArray();
  j.EndObject();
  out << "\n";
}

}  // namespace

void PrintProcessBreakdown(const analysis::ProcessBreakdown& breakdown,
                           const ReportOptions& options, std::ostream& out) {
  size_t shown = RowsShown(breakdown.rows.size(), options.top);
  if (options.format == Format::kJson) {
    PrintJson(breakdown, options, shown, out);
  } else {
    PrintText(breakdown, options, shown, out);
  }
}

}  // namespace heaprec::render
