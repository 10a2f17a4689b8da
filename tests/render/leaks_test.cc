// The outputs of `heaprec leaks` (render/leaks.h) on synthetic series whose answer is known: text
// and JSON, the SVG chart and the HTML page (parsed by check_output.py, hostile names included),
// on native and Ruby front end profiles.
#include "render/leaks.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>

#include "analysis/leak_series.h"
#include "leak_profiles.h"
#include "test_profiles.h"

namespace heaprec::render {
namespace {

using namespace ::heaprec::profile;
using namespace ::heaprec::analysis;
using namespace ::heaprec::test_support::leaks;  // NOLINT: the synthetic series

TEST(AnalyzeLeaksTest, LeavesPeakProfilesOut) {
  std::vector<LeakInput> inputs = ThreeSites(8, 1);
  Profile peak =
      MakeProfile(8, kT0 + kSecond / 2, 1, {{.leaf = kFlat, .objects = 1000, .size = 65536}});
  peak.comments[0] = "heaprec " HEAPREC_VERSION " pid=8 reason=peak sample_interval=1";
  inputs.push_back({"p.8.peak.pb.gz", peak});
  std::vector<LeakSeries> series = AnalyzeLeaks(inputs, {});
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].files.size(), 12u);
  EXPECT_EQ(series[0].peak_profiles_left_out, 1u);
  EXPECT_EQ(Find(series[0], "flat")->max_bytes, 16 * 65536);
  std::ostringstream text;
  PrintLeaksText(series, {}, text);
  EXPECT_NE(text.str().find("(1 peak profile left out)"), std::string::npos) << text.str();
}

TEST(AnalyzeLeaksTest, TooFewProfilesMakeNoSuspect) {
  std::vector<LeakInput> inputs = ThreeSites(9, 1);
  inputs.resize(3);
  LeakSeries s = AnalyzeLeaks(inputs, {})[0];
  EXPECT_EQ(s.suspects, 0u);
  EXPECT_EQ(s.sites[0].name, "leak");  // still ranked by score
  std::ostringstream text;
  PrintLeaksText({s}, {}, text);
  EXPECT_NE(text.str().find("fewer than 4 profiles"), std::string::npos) << text.str();
}

TEST(LeaksOutputTest, TextAndJson) {
  std::vector<LeakSeries> series = AnalyzeLeaks(ThreeSites(42, 1), {});
  LeakReportOptions options;
  options.top = 2;
  std::ostringstream text;
  PrintLeaksText(series, options, text);
  EXPECT_NE(text.str().find("pid 42: 12 profiles over 1.1 s, exact; 1 suspect among 3 sites"),
            std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("   1  yes      1000.0 KiB/s  1.00      inf     +1.1 MiB      1.2 MiB"
                            "        -  leak app.c:10\n"),
            std::string::npos)
      << text.str();
  EXPECT_EQ(text.str().find("churn"), std::string::npos) << "--top 2 shows 2 rows";

  std::ostringstream json;
  PrintLeaksJson(series, options, json);
  for (const char* expected :
       {"\"pid\": 42,", "\"profiles\": 12,", "\"sampled\": false,", "\"suspect_count\": 1,",
        "\"rank\": 1,\n          \"site\": \"leak\",", "\"suspect\": true,",
        "\"slope_bytes_per_second\": 1024000.0,", "\"r2\": 1.0000,", "\"age_seconds\": null,",
        "{\"seconds\": 0.000, \"bytes\": 102400, \"low\": 102400, \"high\": 102400}"}) {
    EXPECT_NE(json.str().find(expected), std::string::npos) << expected << "\n" << json.str();
  }
  std::string dir = test_support::MakeTempDir();
  FILE* f = fopen((dir + "/leaks.json").c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs(json.str().c_str(), f);
  fclose(f);
  std::string out;
  ASSERT_EQ(
      test_support::RunCommand(
          "python3 " HEAPREC_LEAKS_CHECK " " + test_support::ShellQuote(dir + "/leaks.json"), &out),
      0)
      << out;
  EXPECT_NE(out.find("site rank=1 name=leak suspect=1 slope=1024000 r2=1.0000"), std::string::npos)
      << out;
}

TEST(LeaksOutputTest, SvgAndHtmlParseWithHostileNames) {
  std::vector<LeakInput> inputs = ThreeSites(42, 512 * 1024, 2000);
  for (LeakInput& in : inputs) {
    in.profile.functions[1].name = "leak<char> & \"co\" \x01\xff";  // markup, control, bad UTF-8
  }
  std::vector<LeakSeries> series = AnalyzeLeaks(inputs, {});
  std::string svg = LeaksSvg(series[0], 3);
  std::string html = LeaksHtml(series, {}, 3);
  EXPECT_NE(svg.find("leak&lt;char&gt; &amp; &quot;co&quot;"), std::string::npos);
  EXPECT_NE(svg.find("live bytes (MiB)"), std::string::npos);
  EXPECT_NE(svg.find("time since the first profile (s)"), std::string::npos);
  std::string dir = test_support::MakeTempDir();
  std::string json_path = dir + "/l.json", svg_path = dir + "/l.svg", html_path = dir + "/l.html";
  for (auto [path, text] : {std::pair{json_path, std::string("{\"series\": []}")},
                            std::pair{svg_path, svg}, std::pair{html_path, html}}) {
    FILE* f = fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    fputs(text.c_str(), f);
    fclose(f);
  }
  std::string out;
  ASSERT_EQ(test_support::RunCommand(
                "python3 " HEAPREC_LEAKS_CHECK " " + test_support::ShellQuote(json_path) + " " +
                    test_support::ShellQuote(svg_path) + " " + test_support::ShellQuote(html_path),
                &out),
            0)
      << out << svg;
  // Three sites, a panel each; error bars on all (sampled); one fitted line (the suspect).
  EXPECT_NE(out.find("svg polylines=3 errorbars=3 fits=1 panels=3"), std::string::npos) << out;
  EXPECT_NE(out.find("html svg=1 table=1"), std::string::npos) << out;
}

TEST(LeaksOutputTest, EmptySeriesStillDrawsAxes) {
  std::string svg = LeaksSvg(LeakSeries{}, 5);
  EXPECT_NE(svg.find("no site holds live memory"), std::string::npos) << svg;
  EXPECT_NE(svg.find("live bytes (KiB)"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("nan"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("inf"), std::string::npos) << svg;
}

// A series of Ruby front end profiles (test_support::MakeRubyProfile): Cache#fill's Array objects
// (B) grow by 5000 objects of 60 B a second, sampled 1 in 100; everything else stays.
std::vector<LeakInput> RubySeries() {
  std::vector<LeakInput> inputs;
  for (int64_t i = 0; i < 5; ++i) {
    Profile p = test_support::MakeRubyProfile(100);
    int64_t objects = 5000 * (i + 1);
    p.samples[1].values = {objects, objects * 60};
    p.time_nanos += i * kSecond;  // the oldest objects stay those of 2 s before the first profile
    for (Sample& s : p.samples) {
      for (Label& label : s.labels) {
        if (label.key == "age_ns") label.num += i * kSecond;
      }
    }
    inputs.push_back({"ruby." + std::to_string(i) + ".pb.gz", std::move(p)});
  }
  return inputs;
}

TEST(RubyLeaksTest, GrowingRubySiteIsASuspectWithPerObjectErrors) {
  std::vector<LeakSeries> all = AnalyzeLeaks(RubySeries(), {});
  ASSERT_EQ(all.size(), 1u);
  const LeakSeries& s = all[0];
  EXPECT_FALSE(s.pid.has_value());  // MakeRubyProfile carries no pid= comment
  EXPECT_EQ(s.period, 100);
  EXPECT_TRUE(s.per_object);
  ASSERT_NE(Find(s, "Cache#fill"), nullptr);
  const LeakSite& fill = *Find(s, "Cache#fill");
  EXPECT_EQ(&fill, &s.sites[0]);
  EXPECT_TRUE(fill.suspect);
  EXPECT_EQ(fill.file, "/app/lib/cache.rb");
  EXPECT_EQ(fill.line, 15);  // the line that holds the most of the site's bytes
  EXPECT_EQ(fill.Label(), "Cache#fill cache.rb:15");
  EXPECT_NEAR(fill.fit.slope, 300000, 1e-6);
  EXPECT_EQ(fill.growth(), 4 * 300000);
  ASSERT_EQ(fill.points.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    // Per object: 5000·(i+1) objects, each of weight 100, so Var = N·99·60².
    EXPECT_DOUBLE_EQ(fill.points[i].variance, 5000.0 * static_cast<double>(i + 1) * 99 * 60 * 60);
  }
  EXPECT_GT(fill.fit.var_sampling, 0);
  ASSERT_TRUE(fill.age_seconds.has_value());
  EXPECT_NEAR(*fill.age_seconds, 6.0, 1e-9);
  // The rest is constant: no suspects.
  EXPECT_EQ(s.suspects, 1u);
  ASSERT_NE(Find(s, "<main>"), nullptr);
  EXPECT_FALSE(Find(s, "<main>")->suspect);
  EXPECT_EQ(Find(s, "<main>")->line, 7);
  ASSERT_NE(Find(s, "block in Cache#fill"), nullptr);
  EXPECT_EQ(Find(s, "block in Cache#fill")->last_bytes, 16000);

  std::ostringstream text;
  PrintLeaksText(all, {}, text);
  EXPECT_NE(text.str().find("all profiles: 5 profiles over 4.0 s, sampled 1 in 100 objects; 1 "
                            "suspect among 3 sites"),
            std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("  Cache#fill cache.rb:15\n"), std::string::npos) << text.str();
  std::ostringstream json;
  PrintLeaksJson(all, {}, json);
  EXPECT_NE(json.str().find("\"period\": 100,\n      \"sampled\": true,\n      \"period_type\": "
                            "\"objects\","),
            std::string::npos)
      << json.str();
  EXPECT_NE(LeaksSvg(s, 3).find("sampled 1 in 100 objects; bars: 95% intervals"),
            std::string::npos);
  EXPECT_NE(LeaksHtml(all, {}, 3).find("sampled 1 in 100 objects"), std::string::npos);

  // With --by stack, the frames are the Ruby function names, leaf first.
  LeakOptions by_stack;
  by_stack.by = LeakSiteKind::kStack;
  LeakSeries stacks = AnalyzeLeaks(RubySeries(), by_stack)[0];
  EXPECT_EQ(stacks.sites[0].stack, (std::vector<std::string>{"Cache#fill", "<main>"}));
}

TEST(RubyLeaksTest, ExactRubySeries) {
  std::vector<LeakInput> inputs;
  for (int64_t i = 0; i < 4; ++i) {
    Profile p = test_support::MakeRubyProfile(1);
    p.samples[1].values = {10 * (i + 1), 10 * (i + 1) * 60};
    p.time_nanos += i * kSecond;
    inputs.push_back({"ruby." + std::to_string(i) + ".pb.gz", std::move(p)});
  }
  LeakSeries s = AnalyzeLeaks(inputs, {})[0];
  EXPECT_EQ(DescribeSampling(s), "exact");
  const LeakSite* fill = Find(s, "Cache#fill");
  ASSERT_NE(fill, nullptr);
  EXPECT_TRUE(fill->suspect);
  for (const LeakPoint& point : fill->points) EXPECT_EQ(point.variance, 0);
}

}  // namespace
}  // namespace heaprec::render
