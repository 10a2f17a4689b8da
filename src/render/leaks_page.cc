// The HTML page of `heaprec leaks --html`: per series (one per process), its chart (leaks_chart.cc)
// and its table, self-contained (no script, nothing loaded).
#include <sstream>
#include <string>
#include <vector>

#include "render/format.h"
#include "render/leaks.h"
#include "render/markup.h"
#include "schema/profile_schema.h"

namespace heaprec::render {
namespace {

using analysis::kMinProfilesForPlateau;
using analysis::kMinProfilesForSuspect;
using analysis::LeakSeries;
using analysis::LeakSite;
using analysis::LeakSiteKind;

constexpr const char* kStyle =
    "body { font-family: DejaVu Sans, Helvetica, Arial, sans-serif; margin: 24px; color: #222; }\n"
    "table { border-collapse: collapse; margin: 12px 0 28px; font-size: 13px; }\n"
    "th, td { padding: 4px 10px; border-bottom: 1px solid #ddd; text-align: right; }\n"
    "th { background: #f4f4f4; } .site { text-align: left; } td.site { font-family: monospace; }\n"
    "tr.suspect td { font-weight: bold; background: #fff0ee; }\n"
    "tr.plateau td { color: #34597d; }\n"
    ".note { color: #555; font-size: 13px; max-width: 960px; }\n";

std::string Verdict(const LeakSite& site) {
  if (site.suspect) return "yes";
  if (site.plateau) return "plateau";
  return "-";
}

void Table(const LeakSeries& s, size_t top, std::ostringstream& o) {
  const bool at_exit = !s.final_file.empty();
  o << "<table>\n<tr><th>#</th><th>suspect</th><th>slope</th><th>R\xC2\xB2</th><th>t</th>"
       "<th>growth</th><th>last</th>"
    << (at_exit ? "<th title=\"live bytes in the final profile\">at exit</th>" : "")
    << "<th>oldest</th><th class=\"site\">site</th></tr>\n";
  size_t shown = RowsShown(s.sites.size(), top);
  for (size_t i = 0; i < shown; ++i) {
    const LeakSite& site = s.sites[i];
    const char* row_class = site.suspect   ? " class=\"suspect\""
                            : site.plateau ? " class=\"plateau\""
                                           : "";
    o << "<tr" << row_class << "><td>" << i + 1 << "</td><td>" << Verdict(site) << "</td><td>"
      << XmlEscape(FormatBytes(site.fit.slope)) << "/s</td><td>" << FormatFixed(site.fit.r2, 2)
      << "</td><td>" << FormatT(site.fit.t) << "</td><td>"
      << XmlEscape(FormatChange(site.growth(), schema::kBytesUnit)) << "</td><td>"
      << XmlEscape(FormatValue(site.last_bytes, schema::kBytesUnit)) << "</td>";
    if (at_exit) {
      o << "<td class=\"at-exit\">"
        << XmlEscape(FormatValue(site.final_bytes.value_or(0), schema::kBytesUnit)) << "</td>";
    }
    o << "<td>" << (site.age_seconds ? XmlEscape(FormatSeconds(*site.age_seconds)) : "-")
      << "</td><td class=\"site\">" << XmlEscape(site.Label()) << "</td></tr>\n";
  }
  o << "</table>\n";
}

}  // namespace

std::string LeaksHtml(const std::vector<LeakSeries>& all, const LeakReportOptions& options,
                      size_t chart_sites) {
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
       "<title>heaprec leaks</title>\n<style>\n"
    << kStyle << "</style>\n</head>\n<body>\n<h1>heaprec leaks</h1>\n";
  o << "<p class=\"note\">Sites ranked by growth of their live bytes (inuse_space), "
    << (options.analysis.by == LeakSiteKind::kStack ? "one per call stack"
                                                    : "one per allocating function")
    << ", one section per process. slope: least-squares line through the profiles; R\xC2\xB2: "
       "its fit; t: slope divided by its standard error, which adds to the scatter around the "
       "line a bound of the sampling error; suspect: t &ge; "
    << FormatFixed(options.analysis.min_t, 1) << ", R\xC2\xB2 &ge; "
    << FormatFixed(options.analysis.min_r2, 2) << ", last above first, at least "
    << kMinProfilesForSuspect
    << " profiles, and not a plateau; plateau: rose, then its last third (of at least "
    << kMinProfilesForPlateau
    << " profiles) stopped rising, within two standard errors, while the whole series' slope is "
       "more than that above the last third's: a cache that filled up, not a leak; at exit: live "
       "bytes in the process's final profile, what was never freed; oldest: age of the oldest "
       "live sampled object (- when unknown). Each chart has its own scale.</p>\n";
  if (all.empty()) o << "<p>No profiles.</p>\n";
  for (const LeakSeries& s : all) {
    o << "<h2>" << XmlEscape(s.pid ? "pid " + std::to_string(*s.pid) : "all profiles") << "</h2>\n";
    o << "<p>" << s.files.size() << " profiles over "
      << XmlEscape(FormatSeconds(s.duration_seconds)) << ", " << XmlEscape(DescribeSampling(s))
      << "; " << s.suspects << " suspect" << (s.suspects == 1 ? "" : "s") << " among "
      << s.sites.size() << " sites";
    if (s.plateaus > 0) {
      o << ", " << s.plateaus << " plateau" << (s.plateaus == 1 ? "" : "s");
    }
    if (s.peak_profiles_left_out > 0) {
      o << " (" << s.peak_profiles_left_out << " peak profile"
        << (s.peak_profiles_left_out == 1 ? "" : "s") << " left out)";
    }
    o << ".";
    if (!s.final_file.empty()) o << " At exit: " << XmlEscape(s.final_file) << ".";
    o << "</p>\n";
    o << LeaksSvg(s, chart_sites);
    Table(s, options.top, o);
  }
  o << "</body>\n</html>\n";
  return o.str();
}

}  // namespace heaprec::render
