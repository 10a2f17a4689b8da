// `heaprec leaks`'s tables (analysis/leak_series.h): per series, its sites ranked by growth, as
// text or JSON.
#include "render/leaks.h"

#include <cmath>

#include "render/format.h"
#include "render/json_writer.h"
#include "render/utf8.h"
#include "schema/profile_schema.h"

namespace heaprec::render {
namespace {

using analysis::kMaxT;
using analysis::kMinProfilesForSuspect;
using analysis::LeakPoint;
using analysis::LeakSeries;
using analysis::LeakSite;
using analysis::LeakSiteKind;

std::string SeriesTitle(const LeakSeries& s) {
  std::string title = s.pid ? "pid " + std::to_string(*s.pid) : std::string("all profiles");
  title += ": " + std::to_string(s.files.size()) + " profile" + (s.files.size() == 1 ? "" : "s") +
           " over " + FormatSeconds(s.duration_seconds) + ", ";
  title += DescribeSampling(s);
  title += "; " + std::to_string(s.suspects) + " suspect" + (s.suspects == 1 ? "" : "s") +
           " among " + std::to_string(s.sites.size()) + " site" + (s.sites.size() == 1 ? "" : "s");
  if (s.plateaus > 0) {
    title += ", " + std::to_string(s.plateaus) + " plateau" + (s.plateaus == 1 ? "" : "s");
  }
  if (s.peak_profiles_left_out > 0) {
    title += " (" + std::to_string(s.peak_profiles_left_out) + " peak profile" +
             (s.peak_profiles_left_out == 1 ? "" : "s") + " left out)";
  }
  if (!s.final_file.empty())
    title += "\n  at exit: live bytes in the final profile " + s.final_file;
  return title;
}

}  // namespace

std::string FormatT(double t) {
  if (t >= kMaxT) return "inf";
  if (t <= -kMaxT) return "-inf";
  return FormatFixed(t, 1);
}

std::string DescribeSampling(const LeakSeries& s) {
  if (s.period <= 1) return "exact";
  if (s.per_object) return "sampled " + FormatObjectSampling(s.period);
  return "sampled every " + FormatValue(s.period, schema::kBytesUnit);
}

void PrintLeaksText(const std::vector<LeakSeries>& all, const LeakReportOptions& options,
                    std::ostream& out) {
  if (all.empty()) out << "No profiles.\n";
  bool first = true;
  for (const LeakSeries& s : all) {
    if (!first) out << "\n";
    first = false;
    out << SeriesTitle(s) << "\n";
    if (s.files.size() < kMinProfilesForSuspect) {
      out << "  (fewer than " << kMinProfilesForSuspect
          << " profiles: no site can be called a suspect; use heaprec run --dump-interval)\n";
    }
    size_t shown = RowsShown(s.sites.size(), options.top);
    if (shown == 0) continue;
    const bool at_exit = !s.final_file.empty();
    out << "   #  suspect       slope/s    R2        t       growth         last"
        << (at_exit ? "      at exit" : "") << "   oldest  site\n";
    for (size_t i = 0; i < shown; ++i) {
      const LeakSite& site = s.sites[i];
      const char* verdict = site.suspect ? "yes" : site.plateau ? "plateau" : "-";
      out << PadLeft(std::to_string(i + 1), 4) << "  " << PadRight(verdict, 7)
          << PadLeft(FormatBytes(site.fit.slope) + "/s", 14)
          << PadLeft(FormatFixed(site.fit.r2, 2), 6) << PadLeft(FormatT(site.fit.t), 9)
          << PadLeft(FormatChange(site.growth(), schema::kBytesUnit), 13)
          << PadLeft(FormatValue(site.last_bytes, schema::kBytesUnit), 13);
      if (at_exit)
        out << PadLeft(FormatValue(site.final_bytes.value_or(0), schema::kBytesUnit), 13);
      out << PadLeft(site.age_seconds ? FormatSeconds(*site.age_seconds) : "-", 9) << "  "
          << site.Label() << "\n";
    }
  }
  out << "\nslope: least-squares growth of live bytes; t: slope / its standard error (sampling "
         "error included)\nsuspect: t >= "
      << FormatFixed(options.analysis.min_t, 1)
      << ", R2 >= " << FormatFixed(options.analysis.min_r2, 2) << ", last > first, "
      << kMinProfilesForSuspect
      << "+ profiles, not a plateau\nplateau: rose, then its last third stopped rising (a cache); "
         "oldest: age of the oldest live sampled object\n";
}

void PrintLeaksJson(const std::vector<LeakSeries>& all, const LeakReportOptions& options,
                    std::ostream& out) {
  JsonWriter j(out);
  j.BeginObject();
  j.Key("sample_index").String(schema::kInuseSpace);
  j.Key("unit").String(schema::kBytesUnit);
  j.Key("by").String(options.analysis.by == LeakSiteKind::kStack ? "stack" : "function");
  j.Key("min_t").Double(options.analysis.min_t, 2);
  j.Key("min_r2").Double(options.analysis.min_r2, 2);
  j.Key("min_profiles").Int(static_cast<int64_t>(kMinProfilesForSuspect));
  j.Key("series").BeginArray();
  for (const LeakSeries& s : all) {
    j.BeginObject();
    j.Key("pid");
    s.pid ? j.Int(*s.pid) : j.Null();
    j.Key("profiles").Int(static_cast<int64_t>(s.files.size()));
    j.Key("duration_seconds").Double(s.duration_seconds, 3);
    j.Key("period").Int(s.period);
    j.Key("sampled").Bool(s.period > 1);
    j.Key("period_type")
        .String(s.per_object ? schema::kPerObjectPeriodType : schema::kPerBytePeriodType);
    j.Key("peak_profiles_left_out").Int(static_cast<int64_t>(s.peak_profiles_left_out));
    j.Key("final_file");
    s.final_file.empty() ? j.Null() : j.String(s.final_file);
    j.Key("files").BeginArray();
    for (const std::string& f : s.files) j.String(f);
    j.EndArray();
    j.Key("time_nanos").BeginArray();
    for (int64_t t : s.time_nanos) j.Int(t);
    j.EndArray();
    j.Key("site_count").Int(static_cast<int64_t>(s.sites.size()));
    j.Key("suspect_count").Int(static_cast<int64_t>(s.suspects));
    j.Key("plateau_count").Int(static_cast<int64_t>(s.plateaus));
    j.Key("sites").BeginArray();
    size_t shown = RowsShown(s.sites.size(), options.top);
    for (size_t i = 0; i < shown; ++i) {
      const LeakSite& site = s.sites[i];
      j.BeginObject();
      j.Key("rank").Int(static_cast<int64_t>(i + 1));
      j.Key("site").String(site.name);
      j.Key("file").String(site.file);
      j.Key("line").Int(site.line);
      j.Key("stack").BeginArray();
      for (const std::string& frame : site.stack) j.String(frame);
      j.EndArray();
      j.Key("suspect").Bool(site.suspect);
      j.Key("plateau").Bool(site.plateau);
      j.Key("score").Double(site.score, 1);
      j.Key("slope_bytes_per_second").Double(site.fit.slope, 1);
      j.Key("slope_stderr").Double(site.fit.stderr_slope, 1);
      j.Key("t").Double(site.fit.t, 2);
      j.Key("r2").Double(site.fit.r2, 4);
      j.Key("first_bytes").Int(site.first_bytes);
      j.Key("last_bytes").Int(site.last_bytes);
      j.Key("growth_bytes").Int(site.growth());
      j.Key("max_bytes").Int(site.max_bytes);
      j.Key("final_bytes");
      site.final_bytes ? j.Int(*site.final_bytes) : j.Null();
      j.Key("age_seconds");
      site.age_seconds ? j.Double(*site.age_seconds, 3) : j.Null();
      j.Key("points").BeginArray();
      for (const LeakPoint& p : site.points) {
        j.BeginObject(/*on_one_line=*/true);
        j.Key("seconds").Double(p.seconds, 3);
        j.Key("bytes").Int(p.bytes);
        j.Key("low").Int(std::llround(p.low));
        j.Key("high").Int(std::llround(p.high));
        j.EndObject();
      }
      j.EndArray();
      j.EndObject();
    }
    j.EndArray();
    j.EndObject();
  }
  j.EndArray();
  j.EndObject();
  out << "\n";
}

}  // namespace heaprec::render
