// The leaks chart's small multiples (render/leaks_chart.cc): each site's panel spans the site's own
// range, fitted lines stay inside their plot, the HTML table's at exit column, one section per
// process; and the chart's scales (render/leaks_chart_scale.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/leak_series.h"
#include "leak_profiles.h"
#include "render/leaks.h"
#include "render/leaks_chart_scale.h"

namespace heaprec::render {
namespace {

using namespace ::heaprec::analysis;
using namespace ::heaprec::test_support::leaks;  // NOLINT: the synthetic series

constexpr double kMiB = 1024.0 * 1024.0;

// One panel of the SVG: its attributes and the y coordinates of its series and fitted line.
struct Panel {
  std::string rank;
  double y_max = 0;  // bytes
  double top = 0, bottom = 0;
  std::vector<double> series_y;
  std::vector<double> fit_y;
};

std::vector<Panel> Panels(const std::string& svg) {
  std::vector<Panel> panels;
  std::regex start(
      "<g class=\"panel\"(?: data-rank=\"([0-9]+)\"[^>]*)? data-y-max=\"([0-9.]+)\" "
      "data-plot=\"([0-9.]+) ([0-9.]+) ([0-9.]+) ([0-9.]+)\">");
  std::regex polyline("<polyline class=\"series\"[^>]* points=\"([^\"]*)\"");
  std::regex fit(
      "<line class=\"fit\" x1=\"[0-9.-]+\" y1=\"([0-9.-]+)\" x2=\"[0-9.-]+\" "
      "y2=\"([0-9.-]+)\"");
  std::smatch m;
  std::string rest = svg;
  while (std::regex_search(rest, m, start)) {
    Panel p;
    p.rank = m[1].str();
    p.y_max = std::stod(m[2].str());
    p.top = std::stod(m[4].str());
    p.bottom = std::stod(m[6].str());
    std::string body = m.suffix().str();
    body = body.substr(0, body.find("<g class=\"panel\""));  // up to the next panel
    std::smatch pm;
    if (std::regex_search(body, pm, polyline)) {
      std::istringstream points(pm[1].str());
      std::string xy;
      while (points >> xy) p.series_y.push_back(std::stod(xy.substr(xy.find(',') + 1)));
    }
    if (std::regex_search(body, pm, fit)) p.fit_y = {std::stod(pm[1]), std::stod(pm[2])};
    panels.push_back(p);
    rest = m.suffix().str();
  }
  return panels;
}

// Twelve profiles 1 s apart: a cache filling up to 373 MiB in 5 s, then holding it; a leak growing
// from 4 to 26 MiB. On one shared axis the leak would be a line on the floor.
std::vector<LeakInput> CacheAndSmallLeak() {
  std::vector<LeakInput> inputs;
  for (int i = 0; i < 12; ++i) {
    std::vector<Group> groups = {
        {.leaf = kFlat, .objects = std::min(75 * (i + 1), 373), .size = 1 << 20},
        {.leaf = kLeak, .objects = 2 * i + 4, .size = 1 << 20}};
    inputs.push_back(
        {"p." + std::to_string(i) + ".pb.gz", MakeProfile(9, kT0 + i * kSecond, 1, groups)});
  }
  return inputs;
}

TEST(LeaksChartTest, EachSitesPanelSpansItsOwnRange) {
  LeakSeries s = AnalyzeLeaks(CacheAndSmallLeak(), {})[0];
  ASSERT_EQ(s.sites.size(), 2u);
  EXPECT_EQ(s.sites[0].name, "leak");
  EXPECT_TRUE(s.sites[0].suspect);
  EXPECT_TRUE(s.sites[1].plateau) << "the cache rose, then stayed";
  std::vector<Panel> panels = Panels(LeaksSvg(s, 5));
  ASSERT_EQ(panels.size(), 2u);
  // The leak's axis ends at its own 26 MiB rounded up to a tick, not at the cache's 373 MiB.
  EXPECT_GE(panels[0].y_max, 26 * kMiB);
  EXPECT_LE(panels[0].y_max, 30 * kMiB);
  EXPECT_GE(panels[1].y_max, 373 * kMiB);
  EXPECT_LE(panels[1].y_max, 400 * kMiB);
  for (const Panel& p : panels) {
    ASSERT_EQ(p.series_y.size(), 12u);
    double height = p.bottom - p.top;
    double highest = *std::min_element(p.series_y.begin(), p.series_y.end());
    // The site's largest value reaches the upper part of its own panel.
    EXPECT_LT(highest - p.top, 0.15 * height) << "panel " << p.rank;
  }
  // The leak rises over most of its panel's height (from 4 to 26 MiB of 30).
  EXPECT_GT(panels[0].series_y.front() - panels[0].series_y.back(),
            0.6 * (panels[0].bottom - panels[0].top));
}

TEST(LeaksChartTest, FittedLineIsClippedToThePlot) {
  // Nothing for 5 s, then 10 MiB a second: the least-squares line starts below 0.
  std::vector<int64_t> late;
  for (int i = 0; i < 12; ++i) late.push_back(10 * std::max(0, i - 5));
  LeakSeries s = AnalyzeLeaks(OneSite(late, 1 << 20), {})[0];
  ASSERT_TRUE(s.sites[0].suspect);
  ASSERT_LT(s.sites[0].fit.intercept, 0);
  std::vector<Panel> panels = Panels(LeaksSvg(s, 5));
  ASSERT_EQ(panels.size(), 1u);
  ASSERT_EQ(panels[0].fit_y.size(), 2u);
  for (double y : panels[0].fit_y) {
    EXPECT_GE(y, panels[0].top - 1e-6);
    EXPECT_LE(y, panels[0].bottom + 1e-6);
  }
}

TEST(LeaksChartTest, ClipLine) {
  // y = -10 + 2t over [0, 20], kept within [0, 20]: from t = 5 (y 0) to t = 15 (y 20).
  auto seg = ClipLine(-10, 2, 0, 20, 0, 20);
  ASSERT_TRUE(seg.has_value());
  EXPECT_DOUBLE_EQ(seg->t0, 5);
  EXPECT_DOUBLE_EQ(seg->y0, 0);
  EXPECT_DOUBLE_EQ(seg->t1, 15);
  EXPECT_DOUBLE_EQ(seg->y1, 20);
  auto falling = ClipLine(30, -2, 0, 20, 0, 20);  // enters at t = 5, leaves at t = 15
  ASSERT_TRUE(falling.has_value());
  EXPECT_DOUBLE_EQ(falling->t0, 5);
  EXPECT_DOUBLE_EQ(falling->t1, 15);
  EXPECT_FALSE(ClipLine(-5, 0, 0, 10, 0, 20).has_value());    // flat below the axis
  EXPECT_FALSE(ClipLine(-100, 1, 0, 10, 0, 20).has_value());  // below all along
  auto inside = ClipLine(1, 1, 0, 10, 0, 20);
  ASSERT_TRUE(inside.has_value());
  EXPECT_DOUBLE_EQ(inside->t0, 0);
  EXPECT_DOUBLE_EQ(inside->t1, 10);
}

TEST(LeaksChartTest, BytesAxisEndsAtANiceTickAboveTheMax) {
  BytesAxis axis(26 * kMiB);
  EXPECT_STREQ(axis.unit(), "MiB");
  EXPECT_DOUBLE_EQ(axis.max_bytes(), 30 * kMiB);
  EXPECT_EQ(axis.Label(10 * kMiB), "10");
  BytesAxis empty(0);
  EXPECT_STREQ(empty.unit(), "KiB");
  EXPECT_DOUBLE_EQ(empty.max_bytes(), 1024);
}

// ThreeSites with the process's exit profile after it.
std::vector<LeakInput> ThreeSitesAndExit(int64_t pid) {
  std::vector<LeakInput> inputs = ThreeSites(pid, 1);
  profile::Profile final_profile =
      MakeProfile(pid, kT0 + 2 * kSecond, 1, {{.leaf = kLeak, .objects = 7, .size = 1024}});
  SetReason(final_profile, "exit");
  inputs.push_back({"p." + std::to_string(pid) + ".pb.gz", std::move(final_profile)});
  return inputs;
}

TEST(LeaksPageTest, AtExitColumnWhenThereIsAFinalProfile) {
  std::string with = LeaksHtml(AnalyzeLeaks(ThreeSitesAndExit(5), {}), {}, 3);
  EXPECT_NE(with.find(">at exit</th>"), std::string::npos) << with;
  EXPECT_NE(with.find("<td class=\"at-exit\">7.0 KiB</td>"), std::string::npos) << with;
  EXPECT_NE(with.find("<td class=\"at-exit\">0 B</td>"), std::string::npos) << with;
  std::string without = LeaksHtml(AnalyzeLeaks(ThreeSites(5, 1), {}), {}, 3);
  EXPECT_EQ(without.find(">at exit</th>"), std::string::npos) << without;
}

TEST(LeaksPageTest, OneSectionPerProcess) {
  std::vector<LeakInput> inputs = ThreeSitesAndExit(5);
  for (LeakInput& in : ThreeSitesAndExit(8)) {
    in.file = "q" + in.file;
    inputs.push_back(std::move(in));
  }
  std::vector<LeakSeries> series = AnalyzeLeaks(inputs, {});
  ASSERT_EQ(series.size(), 2u);
  std::string html = LeaksHtml(series, {}, 3);
  EXPECT_NE(html.find("<h2>pid 5</h2>"), std::string::npos);
  EXPECT_NE(html.find("<h2>pid 8</h2>"), std::string::npos);
  size_t svgs = 0;
  for (size_t at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1)) {
    ++svgs;
  }
  EXPECT_EQ(svgs, 2u);
}

}  // namespace
}  // namespace heaprec::render
