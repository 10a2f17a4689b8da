// The SVG chart of `heaprec leaks`, written by hand (no plotting dependency): small multiples, one
// panel per site with its own y axis (live bytes from 0 to the site's own largest value), all
// panels on the same time axis; in each, the site's live bytes over time, 95% error bars and the
// fitted line of a suspect, clipped to the panel's plot area.
//
// Why small multiples rather than one chart with a log axis: a leak of 26 MiB next to a cache of
// 373 MiB shares no scale with it, and what the chart must show is each site's shape (rising,
// flat, rose then flat). Its own linear axis shows that at full height for every site, whatever its
// size; a log axis would compress a leak's doubling into a short rise, put the error bars' lower
// ends (often 0) at minus infinity, and make slopes unreadable. The panels share the time axis so
// that the moments line up down the page.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "render/format.h"
#include "render/leaks.h"
#include "render/leaks_chart_scale.h"
#include "render/markup.h"
#include "render/utf8.h"

namespace heaprec::render {
namespace {

using analysis::LeakPoint;
using analysis::LeakSeries;
using analysis::LeakSite;

// Colours by verdict: what a panel is matters more than which one it is.
constexpr const char* kSuspectColor = "#d62728";
constexpr const char* kPlateauColor = "#4e79a7";
constexpr const char* kOtherColor = "#6b6b6b";

const char* SiteColor(const LeakSite& site) {
  if (site.suspect) return kSuspectColor;
  if (site.plateau) return kPlateauColor;
  return kOtherColor;
}

std::string Decimal(double v, int decimals = 1) { return FormatFixed(v, decimals); }

std::string SiteStats(const LeakSite& site) {
  std::string stats = FormatBytes(site.fit.slope) + "/s, R\xC2\xB2 " + Decimal(site.fit.r2, 2) +
                      ", t " + FormatT(site.fit.t);
  if (site.suspect) stats += " \xE2\x80\x94 suspect";
  if (site.plateau) stats += " \xE2\x80\x94 plateau: rose, then stayed flat (a cache?)";
  if (site.final_bytes) stats += "; at exit " + FormatBytes(static_cast<double>(*site.final_bytes));
  return stats;
}

// The page's geometry: panels in a grid, each with a heading, a plot and its x tick labels.
struct Layout {
  static constexpr double kWidth = 960, kMargin = 12, kHeader = 58, kGap = 14;
  static constexpr double kHeading = 38, kPlotH = 150, kBelow = 26;
  static constexpr double kAxisLeft = 66, kAxisRight = 14;
  static constexpr double kPanelH = kHeading + kPlotH + kBelow;
  size_t columns = 1;
  double panel_w = kWidth - 2 * kMargin;

  explicit Layout(size_t panels) {
    columns = panels >= 2 ? 2 : 1;
    panel_w = (kWidth - 2 * kMargin - kGap * static_cast<double>(columns - 1)) /
              static_cast<double>(columns);
  }
  size_t Rows(size_t panels) const { return std::max<size_t>(1, (panels + columns - 1) / columns); }
  double PanelX(size_t k) const {
    return kMargin + static_cast<double>(k % columns) * (panel_w + kGap);
  }
  double PanelY(size_t k) const {
    return kHeader + static_cast<double>(k / columns) * (kPanelH + kGap);
  }
  double Height(size_t panels) const {
    return kHeader + static_cast<double>(Rows(panels)) * (kPanelH + kGap) + 24;
  }
};

// One panel: `site` (null: an empty panel, axes only) at index k of the grid.
void DrawPanel(std::ostringstream& o, const Layout& layout, size_t k, const LeakSite* site,
               const TimeAxis& time) {
  const double px = layout.PanelX(k), py = layout.PanelY(k);
  const double left = px + Layout::kAxisLeft;
  const double plot_w = layout.panel_w - Layout::kAxisLeft - Layout::kAxisRight;
  const double top = py + Layout::kHeading, bottom = top + Layout::kPlotH;
  double max_bytes = 0;
  if (site != nullptr) {
    for (const LeakPoint& p : site->points) {
      max_bytes = std::max({max_bytes, p.high, static_cast<double>(p.bytes)});
    }
  }
  const BytesAxis y(max_bytes);
  auto X = [&](double seconds) { return left + time.Fraction(seconds) * plot_w; };
  auto Y = [&](double bytes) { return bottom - y.Fraction(bytes) * Layout::kPlotH; };
  const char* color = site != nullptr ? SiteColor(*site) : kOtherColor;

  o << "<g class=\"panel\"";
  if (site != nullptr) {
    o << " data-rank=\"" << k + 1 << "\" data-suspect=\"" << (site->suspect ? "true" : "false")
      << "\" data-plateau=\"" << (site->plateau ? "true" : "false") << "\"";
  }
  o << " data-y-max=\"" << Decimal(y.max_bytes(), 0) << "\" data-plot=\"" << Decimal(left) << " "
    << Decimal(top) << " " << Decimal(left + plot_w) << " " << Decimal(bottom) << "\">\n";
  if (site != nullptr) {
    o << "<title>" << XmlEscape(site->Label() + " (" + SiteStats(*site) + ")") << "</title>\n";
    std::string heading = std::to_string(k + 1) + ". " + site->Label();
    o << "<text class=\"panel-title\" x=\"" << Decimal(px) << "\" y=\"" << Decimal(py + 13)
      << "\" font-weight=\"bold\"" << (site->suspect ? " fill=\"" + std::string(color) + "\"" : "")
      << ">" << XmlEscape(Truncate(heading, layout.columns == 1 ? 130 : 64)) << "</text>\n";
    o << "<text class=\"panel-stats\" x=\"" << Decimal(px) << "\" y=\"" << Decimal(py + 29)
      << "\" fill=\"#555\" font-size=\"11\">" << XmlEscape(SiteStats(*site)) << "</text>\n";
  }

  // Grid, ticks, axes.
  o << "<g class=\"grid\" stroke=\"#e4e4e4\" stroke-width=\"1\">\n";
  for (double v : y.Ticks()) {
    o << "<line x1=\"" << Decimal(left) << "\" x2=\"" << Decimal(left + plot_w) << "\" y1=\""
      << Decimal(Y(v)) << "\" y2=\"" << Decimal(Y(v)) << "\"/>\n";
  }
  for (double v : time.Ticks()) {
    o << "<line x1=\"" << Decimal(X(v)) << "\" x2=\"" << Decimal(X(v)) << "\" y1=\"" << Decimal(top)
      << "\" y2=\"" << Decimal(bottom) << "\"/>\n";
  }
  o << "</g>\n<g class=\"ticks\" fill=\"#333\" font-size=\"11\">\n";
  for (double v : y.Ticks()) {
    o << "<text x=\"" << Decimal(left - 6) << "\" y=\"" << Decimal(Y(v) + 4)
      << "\" text-anchor=\"end\">" << y.Label(v) << "</text>\n";
  }
  for (double v : time.Ticks()) {
    o << "<text x=\"" << Decimal(X(v)) << "\" y=\"" << Decimal(bottom + 15)
      << "\" text-anchor=\"middle\">" << time.Label(v) << "</text>\n";
  }
  o << "</g>\n";
  o << "<path class=\"axis\" d=\"M" << Decimal(left) << " " << Decimal(top) << " V"
    << Decimal(bottom) << " H" << Decimal(left + plot_w)
    << "\" fill=\"none\" stroke=\"#333\" stroke-width=\"1\"/>\n";
  o << "<text transform=\"translate(" << Decimal(px + 12) << " "
    << Decimal(top + Layout::kPlotH / 2)
    << ") rotate(-90)\" text-anchor=\"middle\" font-size=\"11\">live bytes (" << y.unit()
    << ")</text>\n";
  if (site == nullptr) {
    o << "<text x=\"" << Decimal(left + 10) << "\" y=\"" << Decimal(top + 20)
      << "\">no site holds live memory</text>\n</g>\n";
    return;
  }

  std::string bars;
  for (const LeakPoint& p : site->points) {
    if (p.high - p.low < 1) continue;
    double x = X(p.seconds), y1 = Y(p.low), y2 = Y(p.high);
    bars += "M" + Decimal(x) + " " + Decimal(y1) + " V" + Decimal(y2) + " M" + Decimal(x - 3) +
            " " + Decimal(y1) + " h6 M" + Decimal(x - 3) + " " + Decimal(y2) + " h6 ";
  }
  if (!bars.empty()) {
    bars.pop_back();
    o << "<path class=\"errorbars\" d=\"" << bars << "\" stroke=\"" << color
      << "\" stroke-width=\"1\" stroke-opacity=\"0.55\" fill=\"none\"/>\n";
  }
  if (site->suspect && !site->points.empty()) {
    // The line over the series' span, cut where it leaves the panel's range of bytes: a line
    // whose intercept is below 0 (a leak that started late) must not run under the x axis.
    if (auto seg = ClipLine(site->fit.intercept, site->fit.slope, site->points.front().seconds,
                            site->points.back().seconds, 0, y.max_bytes())) {
      o << "<line class=\"fit\" x1=\"" << Decimal(X(seg->t0)) << "\" y1=\"" << Decimal(Y(seg->y0))
        << "\" x2=\"" << Decimal(X(seg->t1)) << "\" y2=\"" << Decimal(Y(seg->y1)) << "\" stroke=\""
        << color << "\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n";
    }
  }
  o << "<polyline class=\"series\" fill=\"none\" stroke=\"" << color
    << "\" stroke-width=\"2\" points=\"";
  for (size_t i = 0; i < site->points.size(); ++i) {
    o << (i == 0 ? "" : " ") << Decimal(X(site->points[i].seconds)) << ","
      << Decimal(Y(static_cast<double>(site->points[i].bytes)));
  }
  o << "\"/>\n";
  for (const LeakPoint& p : site->points) {
    o << "<circle cx=\"" << Decimal(X(p.seconds)) << "\" cy=\""
      << Decimal(Y(static_cast<double>(p.bytes))) << "\" r=\"2.5\" fill=\"" << color << "\"/>\n";
  }
  o << "</g>\n";
}

}  // namespace

std::string LeaksSvg(const LeakSeries& series, size_t site_count) {
  const size_t shown = std::min(site_count, series.sites.size());
  const size_t panels = std::max<size_t>(shown, 1);
  const Layout layout(panels);
  const double height = layout.Height(panels);
  const TimeAxis time(series.duration_seconds);

  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << Layout::kWidth << "\" height=\""
    << Decimal(height, 0) << "\" viewBox=\"0 0 " << Layout::kWidth << " " << Decimal(height, 0)
    << "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" font-size=\"12\">\n";
  std::string title =
      "Live bytes by allocation site" +
      (series.pid ? " \xE2\x80\x94 pid " + std::to_string(*series.pid) : std::string());
  o << "<title>" << XmlEscape(title) << "</title>\n";
  o << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o << "<text x=\"" << Layout::kMargin << "\" y=\"22\" font-size=\"16\" font-weight=\"bold\">"
    << XmlEscape(title) << "</text>\n";
  std::string subtitle = std::to_string(series.files.size()) + " profiles over " +
                         FormatSeconds(series.duration_seconds) + ", " +
                         (series.period > 1 ? DescribeSampling(series) + "; bars: 95% intervals"
                                            : std::string("exact (every allocation recorded)")) +
                         "; dashed: the fitted line of a suspect; each chart has its own scale";
  o << "<text x=\"" << Layout::kMargin << "\" y=\"42\" fill=\"#555\">" << XmlEscape(subtitle)
    << "</text>\n";
  for (size_t k = 0; k < panels; ++k) {
    DrawPanel(o, layout, k, k < shown ? &series.sites[k] : nullptr, time);
  }
  o << "<text class=\"x-title\" x=\"" << Layout::kWidth / 2 << "\" y=\"" << Decimal(height - 10, 0)
    << "\" text-anchor=\"middle\">time since the first profile (" << time.unit() << ")</text>\n";
  o << "</svg>\n";
  return o.str();
}

}  // namespace heaprec::render
