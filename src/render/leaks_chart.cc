// The SVG chart and the HTML page of `heaprec leaks`, written by hand (no plotting dependency):
// live bytes over time per site, 95% error bars, the fitted line of each suspect, axes, legend.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "render/format.h"
#include "render/leaks.h"
#include "render/markup.h"
#include "render/utf8.h"
#include "schema/profile_schema.h"

namespace heaprec::render {
namespace {

using analysis::kMinProfilesForSuspect;
using analysis::LeakPoint;
using analysis::LeakSeries;
using analysis::LeakSite;
using analysis::LeakSiteKind;

constexpr const char* kColors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                   "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr size_t kColorCount = sizeof kColors / sizeof kColors[0];

// Coordinates and tick labels: one decimal unless asked otherwise.
std::string Decimal(double v, int decimals = 1) { return FormatFixed(v, decimals); }

// A "nice" step (1, 2 or 5 times a power of ten) giving about `count` intervals over `range`.
double NiceStep(double range, int count) {
  if (range <= 0) return 1;
  double raw = range / count;
  double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double f = raw / magnitude;
  double nice = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
  return nice * magnitude;
}

// Tick label without trailing zeros ("0.5", "2", "12.5").
std::string TickLabel(double v, double step) {
  int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  return Decimal(v, std::clamp(decimals, 0, 6));
}

struct Unit {
  double scale;
  const char* name;
};

Unit BytesUnit(double max) {
  if (max >= 1024.0 * 1024 * 1024) return {1024.0 * 1024 * 1024, "GiB"};
  if (max >= 1024.0 * 1024) return {1024.0 * 1024, "MiB"};
  if (max >= 1024.0) return {1024.0, "KiB"};
  return {1, "B"};
}

Unit TimeUnit(double max) {
  if (max >= 7200) return {3600, "h"};
  if (max >= 300) return {60, "min"};
  return {1, "s"};
}

std::string SiteStats(const LeakSite& site) {
  std::string stats = FormatBytes(site.fit.slope) + "/s, R\xC2\xB2 " + Decimal(site.fit.r2, 2) +
                      ", t " + FormatT(site.fit.t);
  if (site.suspect) stats += ", suspect";
  return stats;
}

}  // namespace

std::string LeaksSvg(const LeakSeries& series, size_t site_count) {
  size_t shown = std::min(site_count, series.sites.size());
  const double width = 960, left = 84, right = 28, top = 58, plot_h = 340, bottom = 52;
  const double legend_row = 20, plot_w = width - left - right;
  const double legend_top = top + plot_h + bottom;
  const double height =
      legend_top + legend_row * static_cast<double>(std::max<size_t>(shown, 1)) + 14;

  double max_bytes = 0;
  for (size_t k = 0; k < shown; ++k) {
    for (const LeakPoint& p : series.sites[k].points) {
      max_bytes = std::max({max_bytes, p.high, static_cast<double>(p.bytes)});
    }
  }
  if (max_bytes < 1) max_bytes = 1024;  // nothing to draw: an axis up to 1 KiB
  Unit yu = BytesUnit(max_bytes);
  double y_step = NiceStep(std::max(max_bytes / yu.scale, 1e-9), 5);
  double y_max = std::max(y_step, std::ceil(max_bytes / yu.scale / y_step - 1e-9) * y_step);
  Unit xu = TimeUnit(series.duration_seconds);
  double x_range = series.duration_seconds > 0 ? series.duration_seconds / xu.scale : 1;
  double x_step = NiceStep(x_range, 8);
  double x_max = std::ceil(x_range / x_step - 1e-9) * x_step;

  auto X = [&](double seconds) { return left + seconds / xu.scale / x_max * plot_w; };
  auto Y = [&](double bytes) { return top + plot_h - bytes / yu.scale / y_max * plot_h; };

  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\""
    << Decimal(height, 0) << "\" viewBox=\"0 0 " << width << " " << Decimal(height, 0)
    << "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"12\">\n";
  std::string title =
      "Live bytes by allocation site" +
      (series.pid ? " \xE2\x80\x94 pid " + std::to_string(*series.pid) : std::string());
  o << "<title>" << XmlEscape(title) << "</title>\n";
  o << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o << "<text x=\"" << left << "\" y=\"24\" font-size=\"16\" font-weight=\"bold\">"
    << XmlEscape(title) << "</text>\n";
  std::string subtitle =
      std::to_string(series.files.size()) + " profiles over " +
      FormatSeconds(series.duration_seconds) + ", " +
      (series.period > 1 ? DescribeSampling(series) + "; bars: 95% intervals of the sampled values"
                         : std::string("exact (every allocation recorded)")) +
      "; dashed: least-squares line of each suspect";
  o << "<text x=\"" << left << "\" y=\"43\" fill=\"#555\">" << XmlEscape(subtitle) << "</text>\n";

  // Grid, ticks and axes.
  o << "<g class=\"axes\" stroke=\"#ddd\" stroke-width=\"1\">\n";
  for (double v = 0; v <= y_max + y_step / 2; v += y_step) {
    o << "<line x1=\"" << left << "\" x2=\"" << left + plot_w << "\" y1=\""
      << Decimal(Y(v * yu.scale)) << "\" y2=\"" << Decimal(Y(v * yu.scale)) << "\"/>\n";
  }
  for (double v = 0; v <= x_max + x_step / 2; v += x_step) {
    o << "<line x1=\"" << Decimal(X(v * xu.scale)) << "\" x2=\"" << Decimal(X(v * xu.scale))
      << "\" y1=\"" << top << "\" y2=\"" << top + plot_h << "\"/>\n";
  }
  o << "</g>\n<g class=\"ticks\" fill=\"#333\">\n";
  for (double v = 0; v <= y_max + y_step / 2; v += y_step) {
    o << "<text x=\"" << left - 8 << "\" y=\"" << Decimal(Y(v * yu.scale) + 4)
      << "\" text-anchor=\"end\">" << TickLabel(v, y_step) << "</text>\n";
  }
  for (double v = 0; v <= x_max + x_step / 2; v += x_step) {
    o << "<text x=\"" << Decimal(X(v * xu.scale)) << "\" y=\"" << top + plot_h + 18
      << "\" text-anchor=\"middle\">" << TickLabel(v, x_step) << "</text>\n";
  }
  o << "</g>\n";
  o << "<path class=\"axis\" d=\"M" << left << " " << top << " V" << top + plot_h << " H"
    << left + plot_w << "\" fill=\"none\" stroke=\"#333\" stroke-width=\"1\"/>\n";
  o << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << top + plot_h + 40
    << "\" text-anchor=\"middle\">time since the first profile (" << xu.name << ")</text>\n";
  o << "<text transform=\"translate(20 " << top + plot_h / 2
    << ") rotate(-90)\" text-anchor=\"middle\">live bytes (" << yu.name << ")</text>\n";

  // Sites, last first so that the top-ranked one is drawn on top.
  for (size_t k = shown; k-- > 0;) {
    const LeakSite& site = series.sites[k];
    const char* color = kColors[k % kColorCount];
    o << "<g class=\"site\" data-rank=\"" << k + 1 << "\" data-suspect=\""
      << (site.suspect ? "true" : "false") << "\">\n";
    o << "<title>" << XmlEscape(site.Label() + " (" + SiteStats(site) + ")") << "</title>\n";
    std::string bars;
    for (const LeakPoint& p : site.points) {
      if (p.high - p.low < 1) continue;
      double x = X(p.seconds), y1 = Y(p.low), y2 = Y(p.high);
      bars += "M" + Decimal(x) + " " + Decimal(y1) + " V" + Decimal(y2) + " M" + Decimal(x - 3) +
              " " + Decimal(y1) + " h6 M" + Decimal(x - 3) + " " + Decimal(y2) + " h6 ";
    }
    if (!bars.empty()) {
      bars.pop_back();
      o << "<path class=\"errorbars\" d=\"" << bars << "\" stroke=\"" << color
        << "\" stroke-width=\"1\" stroke-opacity=\"0.6\" fill=\"none\"/>\n";
    }
    if (site.suspect && !site.points.empty()) {
      double t0 = site.points.front().seconds, t1 = site.points.back().seconds;
      o << "<line class=\"fit\" x1=\"" << Decimal(X(t0)) << "\" y1=\""
        << Decimal(Y(site.fit.intercept + site.fit.slope * t0)) << "\" x2=\"" << Decimal(X(t1))
        << "\" y2=\"" << Decimal(Y(site.fit.intercept + site.fit.slope * t1)) << "\" stroke=\""
        << color << "\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n";
    }
    o << "<polyline class=\"series\" fill=\"none\" stroke=\"" << color
      << "\" stroke-width=\"2\" points=\"";
    for (size_t i = 0; i < site.points.size(); ++i) {
      o << (i == 0 ? "" : " ") << Decimal(X(site.points[i].seconds)) << ","
        << Decimal(Y(static_cast<double>(site.points[i].bytes)));
    }
    o << "\"/>\n";
    for (const LeakPoint& p : site.points) {
      o << "<circle cx=\"" << Decimal(X(p.seconds)) << "\" cy=\""
        << Decimal(Y(static_cast<double>(p.bytes))) << "\" r=\"2.5\" fill=\"" << color << "\"/>\n";
    }
    o << "</g>\n";
  }

  // Legend.
  o << "<g class=\"legend\">\n";
  if (shown == 0) {
    o << "<text x=\"" << left << "\" y=\"" << legend_top + 12
      << "\">no site holds live memory</text>\n";
  }
  for (size_t k = 0; k < shown; ++k) {
    const LeakSite& site = series.sites[k];
    double y = legend_top + legend_row * static_cast<double>(k);
    o << "<line x1=\"" << left << "\" x2=\"" << left + 22 << "\" y1=\"" << y + 8 << "\" y2=\""
      << y + 8 << "\" stroke=\"" << kColors[k % kColorCount] << "\" stroke-width=\"3\"/>\n";
    std::string text = std::to_string(k + 1) + ". " + SiteStats(site) + " \xE2\x80\x94 ";
    text += Truncate(site.Label(), std::max<size_t>(20, 125 - text.size()));
    o << "<text x=\"" << left + 30 << "\" y=\"" << y + 12 << "\""
      << (site.suspect ? " font-weight=\"bold\"" : "") << ">" << XmlEscape(text) << "</text>\n";
  }
  o << "</g>\n</svg>\n";
  return o.str();
}

std::string LeaksHtml(const std::vector<LeakSeries>& all, const LeakReportOptions& options,
                      size_t chart_sites) {
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
       "<title>heaprec leaks</title>\n<style>\n"
       "body { font-family: DejaVu Sans, Helvetica, Arial, sans-serif; margin: 24px; color: #222; "
       "}\n"
       "table { border-collapse: collapse; margin: 12px 0 28px; font-size: 13px; }\n"
       "th, td { padding: 4px 10px; border-bottom: 1px solid #ddd; text-align: right; }\n"
       "th { background: #f4f4f4; } .site { text-align: left; } td.site { font-family: monospace; "
       "}\n"
       "tr.suspect td { font-weight: bold; background: #fff3f0; }\n"
       ".note { color: #555; font-size: 13px; max-width: 960px; }\n"
       "</style>\n</head>\n<body>\n<h1>heaprec leaks</h1>\n";
  o << "<p class=\"note\">Sites ranked by growth of their live bytes (inuse_space), "
    << (options.analysis.by == LeakSiteKind::kStack ? "one per call stack"
                                                    : "one per allocating function")
    << ". slope: least-squares line through the profiles; R\xC2\xB2: its fit; t: slope divided "
       "by its standard error, which adds to the scatter around the line a bound of the "
       "sampling error; suspect: t &ge; "
    << Decimal(options.analysis.min_t, 1) << ", R\xC2\xB2 &ge; "
    << Decimal(options.analysis.min_r2, 2) << ", last above first, at least "
    << kMinProfilesForSuspect
    << " profiles; oldest: age of the oldest live sampled object (- when unknown).</p>\n";
  if (all.empty()) o << "<p>No profiles.</p>\n";
  for (const LeakSeries& s : all) {
    o << "<h2>" << XmlEscape(s.pid ? "pid " + std::to_string(*s.pid) : "all profiles") << "</h2>\n";
    o << "<p>" << s.files.size() << " profiles over "
      << XmlEscape(FormatSeconds(s.duration_seconds)) << ", " << XmlEscape(DescribeSampling(s))
      << "; " << s.suspects << " suspect" << (s.suspects == 1 ? "" : "s") << " among "
      << s.sites.size() << " sites";
    if (s.peak_profiles_left_out > 0) {
      o << " (" << s.peak_profiles_left_out << " peak profile"
        << (s.peak_profiles_left_out == 1 ? "" : "s") << " left out)";
    }
    o << ".</p>\n";
    o << LeaksSvg(s, chart_sites);
    size_t shown = RowsShown(s.sites.size(), options.top);
    o << "<table>\n<tr><th>#</th><th>suspect</th><th>slope</th><th>R\xC2\xB2</th><th>t</th>"
         "<th>growth</th><th>last</th><th>oldest</th><th class=\"site\">site</th></tr>\n";
    for (size_t i = 0; i < shown; ++i) {
      const LeakSite& site = s.sites[i];
      o << "<tr" << (site.suspect ? " class=\"suspect\"" : "") << "><td>" << i + 1 << "</td><td>"
        << (site.suspect ? "yes" : "-") << "</td><td>" << XmlEscape(FormatBytes(site.fit.slope))
        << "/s</td><td>" << Decimal(site.fit.r2, 2) << "</td><td>" << FormatT(site.fit.t)
        << "</td><td>" << XmlEscape(FormatChange(site.growth(), schema::kBytesUnit)) << "</td><td>"
        << XmlEscape(FormatValue(site.last_bytes, schema::kBytesUnit)) << "</td><td>"
        << (site.age_seconds ? XmlEscape(FormatSeconds(*site.age_seconds)) : "-")
        << "</td><td class=\"site\">" << XmlEscape(site.Label()) << "</td></tr>\n";
    }
    o << "</table>\n";
  }
  o << "</body>\n</html>\n";
  return o.str();
}

}  // namespace heaprec::render
