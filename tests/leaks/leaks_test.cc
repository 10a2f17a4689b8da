// Unit tests of `heaprec leaks` on synthetic series whose answer is known: the regression and its
// significance (FitLine), grouping and ranking (AnalyzeLeaks), ages, and the outputs.
#include "analysis/leak_series.h"
#include "render/leaks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>

#include "test_profiles.h"

namespace heaprec::cli {
namespace {

using namespace ::heaprec::profile;  // NOLINT: tests name the model unqualified
using namespace ::heaprec::analysis;  // NOLINT
using namespace ::heaprec::render;  // NOLINT

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kT0 = 1'700'000'000 * kSecond;  // CLOCK_REALTIME of the first profile

// Function (and location) ids of the synthetic profiles.
enum : uint64_t { kLeak = 1, kFlat, kChurn, kMain, kCallerA, kCallerB, kTemplate };

struct Group {
  uint64_t leaf;
  int64_t objects;  // inuse_objects
  int64_t size;     // bytes per object
  uint64_t caller = kMain;
  int64_t oldest_alloc_ns = 0;  // 0: no label
};

Profile MakeProfile(int64_t pid, int64_t time_nanos, int64_t period,
                    const std::vector<Group>& groups) {
  Profile p = testing::MakeNativeHeapProfile(period);
  p.time_nanos = time_nanos;
  p.comments = {"heaprec " HEAPREC_VERSION, "pid=" + std::to_string(pid), "reason=interval"};
  p.mappings.push_back(
      {.id = 1, .memory_start = 0x1000, .memory_limit = 0x9000, .filename = "/bin/app"});
  const char* names[] = {"",     "leak",     "flat",     "churn",
                         "main", "caller_a", "caller_b", "std::vector<int, A<&x>>::grow"};
  for (uint64_t id = kLeak; id <= kTemplate; ++id) {
    p.functions.push_back({.id = id,
                           .name = names[id],
                           .filename = "/src/app.c",
                           .start_line = static_cast<int64_t>(10 * id)});
    p.locations.push_back({.id = id,
                           .mapping_id = 1,
                           .address = 0x1000 + 16 * id,
                           .lines = {{.function_id = id, .line = static_cast<int64_t>(10 * id)}}});
  }
  for (const Group& g : groups) {
    Sample s;
    s.location_ids = {g.leaf, g.caller};
    if (g.caller != kMain) s.location_ids.push_back(kMain);
    s.values = {g.objects, g.objects * g.size, g.objects, g.objects * g.size};
    s.labels.push_back({.key = "bytes", .num = g.size, .num_unit = "bytes"});
    if (g.oldest_alloc_ns != 0) {
      s.labels.push_back(
          {.key = "oldest_alloc_ns", .num = g.oldest_alloc_ns, .num_unit = "nanoseconds"});
    }
    p.samples.push_back(s);
  }
  return p;
}

const LeakSite* Find(const LeakSeries& s, const std::string& name) {
  for (const LeakSite& site : s.sites) {
    if (site.name == name) return &site;
  }
  return nullptr;
}

TEST(FitLineTest, ExactLine) {
  std::vector<double> t, y;
  for (int i = 0; i < 10; ++i) {
    t.push_back(0.5 * i);
    y.push_back(1000 + 400 * t.back());
  }
  LinearFit fit = FitLine(t, y, {});
  EXPECT_NEAR(fit.slope, 400, 1e-6);
  EXPECT_NEAR(fit.intercept, 1000, 1e-6);
  EXPECT_NEAR(fit.r2, 1.0, 1e-12);
  EXPECT_NEAR(fit.var_fit, 0, 1e-9);
  EXPECT_GT(fit.t, 1e3);  // no error at all: as significant as can be
}

TEST(FitLineTest, KnownSlopeThroughNoise) {
  std::mt19937_64 rng(42);
  std::normal_distribution<double> noise(0, 50'000);
  std::vector<double> t, y;
  for (int i = 0; i <= 15; ++i) {
    t.push_back(0.1 * i);
    y.push_back(2e6 + 1e6 * t.back() + noise(rng));
  }
  LinearFit fit = FitLine(t, y, {});
  // The slope's standard error is 50 KB / sqrt(Sxx), Sxx = 0.01 · Σ(i - 7.5)² = 3.4 s².
  EXPECT_NEAR(fit.stderr_slope, 50'000 / std::sqrt(3.4), 10'000);
  EXPECT_NEAR(fit.slope, 1e6, 4 * fit.stderr_slope);
  EXPECT_GT(fit.r2, 0.9);
  EXPECT_GT(fit.t, 8);
}

TEST(FitLineTest, FlatNoisySeriesAreRarelySignificant) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(0, 200'000);
  int significant = 0, suspects = 0;
  const int kSeries = 1000;
  for (int k = 0; k < kSeries; ++k) {
    std::vector<double> t, y;
    for (int i = 0; i < 15; ++i) {
      t.push_back(0.1 * i);
      y.push_back(4e6 + noise(rng));
    }
    LinearFit fit = FitLine(t, y, {});
    if (fit.t >= 3) ++significant;
    if (fit.t >= 3 && fit.r2 >= 0.5) ++suspects;
  }
  // Student's t with 13 degrees of freedom: P(t >= 3) ≈ 0.5%, and R² >= 0.5 needs t >= 3.6
  // (P ≈ 0.2%). Generous bounds, the draws are fixed by the seed anyway.
  EXPECT_LE(significant, 15) << "of " << kSeries;
  EXPECT_LE(suspects, 6) << "of " << kSeries;
}

TEST(FitLineTest, SamplingVarianceBound) {
  // t = 0, 1, 2: c = (-0.5, 0, 0.5). Σ|c_i||c_j| min(v_i, v_j) = 0.25·1 + 0.25·9 + 2·0.25·1 = 3.
  LinearFit fit = FitLine({0, 1, 2}, {10, 20, 30}, {1, 4, 9});
  EXPECT_NEAR(fit.slope, 10, 1e-9);
  EXPECT_NEAR(fit.var_sampling, 3.0, 1e-9);
  EXPECT_NEAR(fit.stderr_slope, std::sqrt(3.0), 1e-9);
  EXPECT_NEAR(fit.t, 10 / std::sqrt(3.0), 1e-9);
  // The order of the points does not matter.
  LinearFit shuffled = FitLine({2, 0, 1}, {30, 10, 20}, {9, 1, 4});
  EXPECT_NEAR(shuffled.var_sampling, 3.0, 1e-9);
}

TEST(FitLineTest, DegenerateSeries) {
  EXPECT_EQ(FitLine({}, {}, {}).slope, 0);
  LinearFit one = FitLine({1}, {5}, {});
  EXPECT_EQ(one.slope, 0);
  EXPECT_EQ(one.t, 0);
  LinearFit same_time = FitLine({1, 1, 1}, {1, 2, 3}, {});
  EXPECT_EQ(same_time.slope, 0);
  EXPECT_EQ(same_time.t, 0);
  LinearFit constant = FitLine({0, 1, 2, 3}, {7, 7, 7, 7}, {});
  EXPECT_EQ(constant.slope, 0);
  EXPECT_EQ(constant.r2, 0);
  EXPECT_EQ(constant.t, 0);
}

// Twelve profiles 100 ms apart of one process: `leak` grows by 100 objects of 1 KiB per profile,
// `flat` holds 1 MiB, `churn` holds 0 or 64 KiB.
std::vector<LeakInput> ThreeSites(int64_t pid, int64_t period, int64_t leak_objects_per_step = 100,
                                  bool ages = false) {
  std::vector<LeakInput> inputs;
  const int churn[] = {0, 64, 0, 0, 64, 64, 0, 64, 0, 0, 64, 0};
  for (int i = 0; i < 12; ++i) {
    int64_t now = kT0 + i * kSecond / 10;
    std::vector<Group> groups = {
        {.leaf = kLeak,
         .objects = leak_objects_per_step * (i + 1),
         .size = 1024,
         .oldest_alloc_ns = ages ? kT0 - kSecond : 0},
        {.leaf = kFlat, .objects = 16, .size = 65536, .oldest_alloc_ns = ages ? now - kSecond : 0},
        {.leaf = kChurn, .objects = churn[i], .size = 1024},
    };
    inputs.push_back({"p." + std::to_string(pid) + "." + std::to_string(i) + ".pb.gz",
                      MakeProfile(pid, now, period, groups)});
  }
  return inputs;
}

TEST(AnalyzeLeaksTest, RanksTheSteadyLeakFirst) {
  std::vector<LeakSeries> series = AnalyzeLeaks(ThreeSites(42, 1), {});
  ASSERT_EQ(series.size(), 1u);
  const LeakSeries& s = series[0];
  EXPECT_EQ(s.pid, 42);
  EXPECT_EQ(s.files.size(), 12u);
  EXPECT_NEAR(s.duration_seconds, 1.1, 1e-9);
  ASSERT_EQ(s.sites.size(), 3u);
  const LeakSite& leak = s.sites[0];
  EXPECT_EQ(leak.name, "leak");
  EXPECT_TRUE(leak.suspect);
  EXPECT_NEAR(leak.fit.slope, 100 * 1024 * 10, 1e-3);  // 100 KiB per 100 ms
  EXPECT_NEAR(leak.fit.r2, 1, 1e-9);
  EXPECT_EQ(leak.first_bytes, 100 * 1024);
  EXPECT_EQ(leak.last_bytes, 1200 * 1024);
  EXPECT_EQ(leak.growth(), 1100 * 1024);
  EXPECT_FALSE(leak.age_seconds.has_value());
  EXPECT_EQ(leak.points.size(), 12u);
  EXPECT_EQ(leak.Label(), "leak app.c:10");
  EXPECT_EQ(s.suspects, 1u);
  const LeakSite* flat = Find(s, "flat");
  ASSERT_NE(flat, nullptr);
  EXPECT_FALSE(flat->suspect);
  EXPECT_EQ(flat->fit.slope, 0);
  const LeakSite* churn = Find(s, "churn");
  ASSERT_NE(churn, nullptr);
  EXPECT_FALSE(churn->suspect);
}

TEST(AnalyzeLeaksTest, SamplingErrorCanHideASmallGrowth) {
  // 10 objects of 1 KiB per step: 110 KiB of growth, a perfect line. Exact, a suspect; sampled
  // every 512 KiB, each sampled 1 KiB object stands for ~500 and the interval of the last point
  // (±500 KiB) dwarfs the growth: not a suspect.
  std::vector<LeakSeries> exact_series = AnalyzeLeaks(ThreeSites(1, 1, 10), {});
  const LeakSite& exact = exact_series[0].sites[0];
  EXPECT_EQ(exact.name, "leak");
  EXPECT_TRUE(exact.suspect);
  std::vector<LeakSeries> sampled = AnalyzeLeaks(ThreeSites(1, 512 * 1024, 10), {});
  const LeakSite* leak = Find(sampled[0], "leak");
  ASSERT_NE(leak, nullptr);
  EXPECT_NEAR(leak->fit.slope, exact.fit.slope, 1e-6);
  EXPECT_GT(leak->fit.var_sampling, 0);
  EXPECT_LT(leak->fit.t, 3);
  EXPECT_FALSE(leak->suspect);
  EXPECT_GT(leak->points.back().high, 400.0 * 1024);
  // A growth well above the sampling error stays a suspect in sampled mode: 2000 objects per step.
  std::vector<LeakSeries> big_series = AnalyzeLeaks(ThreeSites(1, 512 * 1024, 2000), {});
  const LeakSite& big = big_series[0].sites[0];
  EXPECT_EQ(big.name, "leak");
  EXPECT_TRUE(big.suspect) << big.fit.t;
}

TEST(AnalyzeLeaksTest, GroupsByPidAndOrdersByTime) {
  std::vector<LeakInput> inputs = ThreeSites(7, 1);
  std::vector<LeakInput> other = ThreeSites(3, 1, 0);  // pid 3 leaks nothing
  for (LeakInput& in : other) inputs.push_back(std::move(in));
  std::mt19937 rng(1);
  std::shuffle(inputs.begin(), inputs.end(), rng);
  std::vector<LeakSeries> series = AnalyzeLeaks(inputs, {});
  ASSERT_EQ(series.size(), 2u);
  EXPECT_EQ(series[0].pid, 3);
  EXPECT_EQ(series[1].pid, 7);
  EXPECT_EQ(series[0].suspects, 0u);
  EXPECT_EQ(series[1].suspects, 1u);
  EXPECT_TRUE(std::is_sorted(series[1].time_nanos.begin(), series[1].time_nanos.end()));
  EXPECT_EQ(series[1].files.front(), "p.7.0.pb.gz");
  // As one series: 24 profiles, two per instant.
  LeakOptions single;
  single.single_series = true;
  std::vector<LeakSeries> one = AnalyzeLeaks(inputs, single);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_FALSE(one[0].pid.has_value());
  EXPECT_EQ(one[0].files.size(), 24u);
}

TEST(AnalyzeLeaksTest, LeavesPeakProfilesOut) {
  std::vector<LeakInput> inputs = ThreeSites(8, 1);
  Profile peak =
      MakeProfile(8, kT0 + kSecond / 2, 1, {{.leaf = kFlat, .objects = 1000, .size = 65536}});
  peak.comments.back() = "reason=peak";
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

TEST(AnalyzeLeaksTest, AgesFromOldestAllocLabel) {
  std::vector<LeakSeries> series = AnalyzeLeaks(ThreeSites(5, 1, 100, /*ages=*/true), {});
  const LeakSite* leak = Find(series[0], "leak");
  const LeakSite* flat = Find(series[0], "flat");
  const LeakSite* churn = Find(series[0], "churn");
  ASSERT_TRUE(leak && flat && churn);
  ASSERT_TRUE(leak->age_seconds.has_value());
  EXPECT_NEAR(*leak->age_seconds, 2.1, 1e-9);  // allocated 1 s before the first of 1.1 s
  ASSERT_TRUE(flat->age_seconds.has_value());
  EXPECT_NEAR(*flat->age_seconds, 1.0, 1e-9);  // replaced continuously: always 1 s old
  EXPECT_FALSE(churn->age_seconds.has_value());
}

TEST(AnalyzeLeaksTest, ByStackSeparatesCallers) {
  std::vector<LeakInput> inputs;
  for (int i = 0; i < 8; ++i) {
    inputs.push_back(
        {"f" + std::to_string(i),
         MakeProfile(1, kT0 + i * kSecond, 1,
                     {{.leaf = kLeak, .objects = 10 * (i + 1), .size = 100, .caller = kCallerA},
                      {.leaf = kLeak, .objects = 50, .size = 100, .caller = kCallerB}})});
  }
  LeakSeries by_function = AnalyzeLeaks(inputs, {})[0];  // copies: the vector is a temporary
  ASSERT_EQ(by_function.sites.size(), 1u);
  EXPECT_TRUE(by_function.sites[0].suspect);
  LeakOptions options;
  options.by = LeakSiteKind::kStack;
  LeakSeries by_stack = AnalyzeLeaks(inputs, options)[0];
  ASSERT_EQ(by_stack.sites.size(), 2u);
  EXPECT_EQ(by_stack.sites[0].stack, (std::vector<std::string>{"leak", "caller_a", "main"}));
  EXPECT_TRUE(by_stack.sites[0].suspect);
  EXPECT_EQ(by_stack.sites[0].Label(), "leak < caller_a < main");
  EXPECT_EQ(by_stack.sites[1].stack, (std::vector<std::string>{"leak", "caller_b", "main"}));
  EXPECT_FALSE(by_stack.sites[1].suspect);
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
  std::string dir = testing::MakeTempDir();
  FILE* f = fopen((dir + "/leaks.json").c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs(json.str().c_str(), f);
  fclose(f);
  std::string out;
  ASSERT_EQ(
      testing::RunCommand(
          "python3 " HEAPREC_LEAKS_CHECK " " + testing::ShellQuote(dir + "/leaks.json"), &out),
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
  std::string dir = testing::MakeTempDir();
  std::string json_path = dir + "/l.json", svg_path = dir + "/l.svg", html_path = dir + "/l.html";
  for (auto [path, text] : {std::pair{json_path, std::string("{\"series\": []}")},
                            std::pair{svg_path, svg}, std::pair{html_path, html}}) {
    FILE* f = fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    fputs(text.c_str(), f);
    fclose(f);
  }
  std::string out;
  ASSERT_EQ(testing::RunCommand(
                "python3 " HEAPREC_LEAKS_CHECK " " + testing::ShellQuote(json_path) + " " +
                    testing::ShellQuote(svg_path) + " " + testing::ShellQuote(html_path),
                &out),
            0)
      << out << svg;
  // Three sites; error bars on all (sampled); one fitted line (the suspect); three legend rows.
  EXPECT_NE(out.find("svg polylines=3 errorbars=3 fits=1 legend=3"), std::string::npos) << out;
  EXPECT_NE(out.find("html svg=1 table=1"), std::string::npos) << out;
}

TEST(LeaksOutputTest, EmptySeriesStillDrawsAxes) {
  std::string svg = LeaksSvg(LeakSeries{}, 5);
  EXPECT_NE(svg.find("no site holds live memory"), std::string::npos) << svg;
  EXPECT_NE(svg.find("live bytes (KiB)"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("nan"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("inf"), std::string::npos) << svg;
}

// A series of Ruby front end profiles (testing::MakeRubyProfile): Cache#fill's Array objects (B)
// grow by 5000 objects of 60 B a second, sampled 1 in 100; everything else stays.
std::vector<LeakInput> RubySeries() {
  std::vector<LeakInput> inputs;
  for (int64_t i = 0; i < 5; ++i) {
    Profile p = testing::MakeRubyProfile(100);
    int64_t objects = 5000 * (i + 1);
    p.samples[1].values = {objects, objects * 60};
    p.time_nanos += i * kSecond;  // oldest_alloc_ns stays 2 s before the first profile
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
  EXPECT_EQ(fill.line, 11);  // no start line: the smallest line of Cache#fill in the profile
  EXPECT_EQ(fill.Label(), "Cache#fill cache.rb:11");
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
  EXPECT_EQ(Find(s, "<main>")->line, 5);
  ASSERT_NE(Find(s, "block in Cache#fill"), nullptr);
  EXPECT_EQ(Find(s, "block in Cache#fill")->last_bytes, 16000);

  std::ostringstream text;
  PrintLeaksText(all, {}, text);
  EXPECT_NE(text.str().find("all profiles: 5 profiles over 4.0 s, sampled 1 in 100 objects; 1 "
                            "suspect among 3 sites"),
            std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("  Cache#fill cache.rb:11\n"), std::string::npos) << text.str();
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
    Profile p = testing::MakeRubyProfile(1);
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
}  // namespace heaprec::cli
