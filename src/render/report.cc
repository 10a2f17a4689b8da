#include "render/report.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "analysis/report.h"
#include "render/attach_note.h"
#include "render/format.h"
#include "render/json_fields.h"
#include "render/json_writer.h"
#include "render/utf8.h"
#include "schema/profile_schema.h"

namespace heaprec::render {
namespace {

using analysis::Report;
using analysis::ReportClass;
using analysis::ReportRow;

// Column widths of the text report: values, and (sampled) "±" + the 95% margin ("±1023.9 KiB").
constexpr size_t kValueWidth = 11;
constexpr size_t kMarginWidth = 12;

// A profile without a single record: instead of an empty table, why, and how to get samples. A
// sampled run of a program that allocates little (less than about one interval in all) is the
// usual cause; an exact profile without records means nothing was allocated while profiled.
void PrintNothingSampled(const analysis::ProfileHeader& p, std::ostream& out) {
  if (p.per_object && p.period > 1) {
    out << "No object was sampled (" << FormatObjectSampling(p.period)
        << "): the program allocated too few objects to be picked. For samples, sample more often: "
           "heaprec run --ruby --sample-every 10 (or 1 to record every object).\n";
  } else if (p.period > 1) {
    out << "No allocation was sampled: heaprec picks about one allocation per "
        << FormatValue(p.period, "bytes")
        << " allocated, and this program allocated less than that (or none was picked). For "
           "samples, lower the interval: heaprec run --sample-interval 4K (or 1 to record every "
           "allocation).\n";
  } else {
    out << "No allocation was recorded: the program allocated nothing while it was profiled.\n";
  }
}

void PrintText(const Report& r, const ReportOptions& o, size_t shown, std::ostream& out) {
  const analysis::ProfileHeader& p = r.header;
  const std::string& unit = r.sample_type.unit;
  if (!o.source.empty()) out << "File: " << o.source << "\n";
  out << "Sample index: " << r.sample_type.type << " (" << unit << ")\n";
  // What is counted is the profile's records (one per stack and label set), not sampled objects:
  // a record stands for every sampled object of its stack, so "samples" misled.
  out << "Total: " << FormatValue(r.total, unit) << " in " << r.samples << " profile record"
      << (r.samples == 1 ? "" : "s");
  if (r.sampled) out << " (" << FormatMargin(r.total_variance, unit) << " at 95%)";
  out << "\n";
  if (p.per_object) {
    out << "Sampling: " << FormatObjectSampling(p.period);
    if (p.native_byte_interval > 0) {
      out << "; native bytes every " << FormatValue(p.native_byte_interval, schema::kBytesUnit);
    }
    out << "\n";
  } else if (p.period > 0) {
    out << "Sampling interval: " << FormatValue(p.period, p.period_type.unit);
    if (!p.period_type.type.empty()) out << " of " << p.period_type.type;
    out << "\n";
  }
  if (p.attach) PrintAttachNote(*p.attach, out);
  if (!p.comments.empty()) {
    out << "Comments:";
    for (const std::string& c : p.comments) out << " " << c;
    out << "\n";
  }
  if (r.samples == 0 && r.rows.empty()) {
    PrintNothingSampled(p, out);
    return;
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
    out << PadLeft(FormatPercent(Percent(row.cum, r.total)), 8) << "  " << row.Label() << "\n";
  }
  if (r.classes.empty()) return;
  size_t classes = RowsShown(r.classes.size(), o.top);
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

void PrintJson(const Report& r, const ReportOptions& o, size_t shown, std::ostream& out) {
  const analysis::ProfileHeader& p = r.header;
  JsonWriter j(out);
  j.BeginObject();
  j.Key("file").String(o.source);
  j.Key("sample_index").String(r.sample_type.type);
  j.Key("unit").String(r.sample_type.unit);
  // The confidence level of the *_low/*_high intervals; null (and the intervals too) when exact.
  j.Key("confidence");
  r.sampled ? j.Double(0.95) : j.Null();
  j.Key("total").Int(r.total);
  WriteIntervalFields(j, "total", r.sampled, r.total, r.total_variance);
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
    WriteFrameFields(j, row);
    j.Key("flat").Int(row.flat);
    WriteIntervalFields(j, "flat", r.sampled, row.flat, row.flat_variance);
    j.Key("flat_percent").Double(Percent(row.flat, r.total));
    j.Key("sum_percent").Double(sum);
    j.Key("cum").Int(row.cum);
    WriteIntervalFields(j, "cum", r.sampled, row.cum, row.cum_variance);
    j.Key("cum_percent").Double(Percent(row.cum, r.total));
    j.EndObject();
  }
  j.EndArray();
  if (!r.classes.empty()) {
    size_t classes = RowsShown(r.classes.size(), o.top);
    j.Key("class_count").Int(static_cast<int64_t>(r.classes.size()));
    j.Key("classes").BeginArray();
    for (size_t i = 0; i < classes; ++i) {
      const ReportClass& c = r.classes[i];
      j.BeginObject();
      j.Key("class").String(c.name);
      j.Key("value").Int(c.value);
      WriteIntervalFields(j, "value", r.sampled, c.value, c.variance);
      j.Key("percent").Double(Percent(c.value, r.total));
      j.EndObject();
    }
    j.EndArray();
  }
  j.EndObject();
  out << "\n";
}

}  // namespace

void PrintReport(const Report& report, const ReportOptions& options, std::ostream& out) {
  // The table leaves out the frames that only lead to the sites (from a copy: stacks, which keep
  // them, index the model's rows).
  Report table = report;
  std::erase_if(table.rows, [](const ReportRow& row) { return row.context; });
  size_t shown = RowsShown(table.rows.size(), options.top);
  if (options.format == Format::kJson) {
    PrintJson(table, options, shown, out);
  } else {
    PrintText(table, options, shown, out);
  }
}

}  // namespace heaprec::render
