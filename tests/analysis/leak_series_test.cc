// The leak series (analysis/leak_series.h) on synthetic series whose answer is known: the
// regression and its significance (FitLine), grouping and ranking (AnalyzeLeaks), and ages.
#include "analysis/leak_series.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "leak_profiles.h"
#include "test_profiles.h"

namespace heaprec::analysis {
namespace {

using namespace ::heaprec::profile;
using namespace ::heaprec::test_support::leaks;  // NOLINT: the synthetic series

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

// The series of ThreeSites with ages, as `age_ns` labels, or as the `oldest_alloc_ns` labels (the
// allocation time) of the files written before them.
void ExpectAges(const std::vector<LeakInput>& inputs) {
  std::vector<LeakSeries> series = AnalyzeLeaks(inputs, {});
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

TEST(AnalyzeLeaksTest, AgesFromTheAgeLabel) { ExpectAges(ThreeSites(5, 1, 100, /*ages=*/true)); }

TEST(AnalyzeLeaksTest, AgesFromOlderFilesOldestAllocationTimes) {
  std::vector<LeakInput> inputs = ThreeSites(5, 1, 100, /*ages=*/true);
  for (LeakInput& in : inputs) {
    for (Sample& s : in.profile.samples) {
      for (Label& label : s.labels) {
        if (label.key != "age_ns") continue;
        label.key = "oldest_alloc_ns";
        label.num = in.profile.time_nanos - label.num;
      }
    }
  }
  ExpectAges(inputs);
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

// ThreeSites(pid) and then the process's final profile, `reason`, 100 ms after the last: `leak`
// freed, `flat` still live (the pool a program keeps to the end), `churn` freed.
std::vector<LeakInput> ThreeSitesAndFinal(int64_t pid, const std::string& reason = "exit") {
  std::vector<LeakInput> inputs = ThreeSites(pid, 1);
  Profile final_profile = MakeProfile(pid, kT0 + 12 * kSecond / 10, 1,
                                      {{.leaf = kLeak, .objects = 0, .size = 1024},
                                       {.leaf = kFlat, .objects = 16, .size = 65536},
                                       {.leaf = kChurn, .objects = 0, .size = 1024}});
  test_support::leaks::SetReason(final_profile, reason);
  inputs.push_back({"p." + std::to_string(pid) + ".pb.gz", final_profile});
  return inputs;
}

TEST(AnalyzeLeaksTest, FinalProfileIsSetAside) {
  for (const char* reason : {"exit", "_exit", "crash", "terminated"}) {
    SCOPED_TRACE(reason);
    std::vector<LeakSeries> series = AnalyzeLeaks(ThreeSitesAndFinal(42, reason), {});
    ASSERT_EQ(series.size(), 1u);
    const LeakSeries& s = series[0];
    EXPECT_EQ(s.final_file, "p.42.pb.gz");
    EXPECT_EQ(s.files.size(), 12u) << "not a point of the series";
    EXPECT_EQ(std::count(s.files.begin(), s.files.end(), "p.42.pb.gz"), 0);
    EXPECT_NEAR(s.duration_seconds, 1.1, 1e-9);
    // The leak is a suspect as without the final profile, whose 0 would have ended its trend.
    const LeakSite* leak = Find(s, "leak");
    ASSERT_NE(leak, nullptr);
    EXPECT_TRUE(leak->suspect);
    EXPECT_EQ(s.sites[0].name, "leak");
    EXPECT_EQ(leak->points.size(), 12u);
    EXPECT_EQ(leak->last_bytes, 1200 * 1024);
    // What each site still held at the end.
    EXPECT_EQ(leak->final_bytes, 0);
    ASSERT_NE(Find(s, "flat"), nullptr);
    EXPECT_EQ(Find(s, "flat")->final_bytes, 16 * 65536);
    ASSERT_NE(Find(s, "churn"), nullptr);
    EXPECT_EQ(Find(s, "churn")->final_bytes, 0);
    EXPECT_EQ(s.suspects, 1u);
  }
}

TEST(AnalyzeLeaksTest, WithoutAFinalProfileNoneIsSetAside) {
  const LeakSeries s = AnalyzeLeaks(ThreeSites(42, 1), {})[0];
  EXPECT_EQ(s.final_file, "");
  for (const LeakSite& site : s.sites) EXPECT_FALSE(site.final_bytes.has_value()) << site.name;
}

TEST(AnalyzeLeaksTest, FinalProfileAloneIsTheSeriesPoint) {
  std::vector<LeakInput> inputs = ThreeSitesAndFinal(42);
  std::vector<LeakInput> only_final = {inputs.back()};
  const LeakSeries s = AnalyzeLeaks(only_final, {})[0];
  EXPECT_EQ(s.final_file, "");
  EXPECT_EQ(s.files, std::vector<std::string>{"p.42.pb.gz"});
  const LeakSite* flat = Find(s, "flat");
  ASSERT_NE(flat, nullptr);
  EXPECT_EQ(flat->last_bytes, 16 * 65536);
  EXPECT_EQ(flat->points.size(), 1u);
  EXPECT_FALSE(flat->final_bytes.has_value());
  EXPECT_EQ(s.suspects, 0u);
}

TEST(AnalyzeLeaksTest, PeakProfilesStayOutNextToTheFinalOne) {
  std::vector<LeakInput> inputs = ThreeSitesAndFinal(42);
  // The peak copy, written at exit: the most the leak held.
  Profile peak = MakeProfile(42, kT0 + 12 * kSecond / 10, 1,
                             {{.leaf = kLeak, .objects = 1200, .size = 1024},
                              {.leaf = kFlat, .objects = 16, .size = 65536}});
  test_support::leaks::SetReason(peak, "peak");
  inputs.push_back({"p.42.peak.pb.gz", peak});
  const LeakSeries s = AnalyzeLeaks(inputs, {})[0];
  EXPECT_EQ(s.peak_profiles_left_out, 1u);
  EXPECT_EQ(s.final_file, "p.42.pb.gz");
  EXPECT_EQ(s.files.size(), 12u);
  EXPECT_EQ(s.sites[0].name, "leak");
  EXPECT_TRUE(s.sites[0].suspect);
  EXPECT_EQ(s.sites[0].final_bytes, 0);
}

TEST(AnalyzeLeaksTest, FinalProfilePerProcess) {
  // Two processes, each with its own final profile.
  std::vector<LeakInput> inputs = ThreeSitesAndFinal(7);
  for (LeakInput& in : ThreeSitesAndFinal(3)) inputs.push_back(std::move(in));
  std::vector<LeakSeries> series = AnalyzeLeaks(inputs, {});
  ASSERT_EQ(series.size(), 2u);
  EXPECT_EQ(series[0].final_file, "p.3.pb.gz");
  EXPECT_EQ(series[1].final_file, "p.7.pb.gz");
  EXPECT_EQ(series[0].files.size(), 12u);
  EXPECT_EQ(series[1].files.size(), 12u);
}

// The plateau rule (leak_series.h): the last third of the series does not rise, when the whole
// series did. Series of 12 profiles 1 s apart, objects of 1 MiB.
constexpr int64_t kMiB = 1 << 20;

// A copy: the series is often a temporary (AnalyzeLeaks's result) that dies with the statement.
LeakSite OnlySite(const std::vector<LeakSeries>& series) {
  EXPECT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].sites.size(), 1u);
  return series[0].sites[0];
}

TEST(PlateauTest, CacheThatFillsThenStaysIsAPlateauNotASuspect) {
  // Fills for 6 s (64 MiB a second), then holds its 384 MiB.
  std::vector<int64_t> cache;
  for (int i = 0; i < 12; ++i) cache.push_back(64 * std::min(i + 1, 6));
  for (int64_t period : {int64_t{1}, int64_t{512 * 1024}}) {
    std::vector<LeakSeries> series = AnalyzeLeaks(OneSite(cache, kMiB, period), {});
    const LeakSite site = OnlySite(series);
    EXPECT_GE(site.fit.t, 3) << "the whole series rose: without the rule, a suspect";
    EXPECT_GE(site.fit.r2, 0.5);
    EXPECT_TRUE(site.plateau) << period;
    EXPECT_FALSE(site.suspect) << period;
    EXPECT_EQ(site.tail_fit.n, 4u);  // the last ⌈12/3⌉ points
    EXPECT_NEAR(site.tail_fit.slope, 0, 1e-6);
    EXPECT_EQ(series[0].suspects, 0u);
    EXPECT_EQ(series[0].plateaus, 1u);
  }
}

TEST(PlateauTest, CacheThatEvictsAfterFillingIsAPlateau) {
  std::vector<int64_t> cache = {50, 100, 150, 200, 250, 300, 300, 290, 290, 280, 285, 280};
  const LeakSite site = OnlySite(AnalyzeLeaks(OneSite(cache, kMiB), {}));
  EXPECT_LT(site.tail_fit.slope, 0);
  EXPECT_TRUE(site.plateau);
  EXPECT_FALSE(site.suspect);
}

TEST(PlateauTest, SteadyLeakIsASuspectNotAPlateau) {
  std::vector<int64_t> leak;
  for (int i = 0; i < 12; ++i) leak.push_back(2 * (i + 1));
  for (int64_t period : {int64_t{1}, int64_t{512 * 1024}}) {
    const LeakSite site = OnlySite(AnalyzeLeaks(OneSite(leak, kMiB, period), {}));
    EXPECT_FALSE(site.plateau) << period;
    EXPECT_TRUE(site.suspect) << period;
    EXPECT_NEAR(site.tail_fit.slope, 2.0 * kMiB, 1e-3);
  }
}

TEST(PlateauTest, LeakThatStartsLateIsASuspectNotAPlateau) {
  // Flat at 10 MiB for 6 s, then 4 MiB more a second.
  std::vector<int64_t> late;
  for (int i = 0; i < 12; ++i) late.push_back(10 + 4 * std::max(0, i - 5));
  const LeakSite site = OnlySite(AnalyzeLeaks(OneSite(late, kMiB), {}));
  EXPECT_FALSE(site.plateau);
  EXPECT_TRUE(site.suspect);
  EXPECT_GT(site.tail_fit.slope, site.fit.slope) << "the tail is the steep part";
}

TEST(PlateauTest, TooShortASeriesHasNoPlateauTest) {
  // Five profiles: rose, then flat for 2; too few points for a tail of 3 after a rise.
  const LeakSite site = OnlySite(AnalyzeLeaks(OneSite({10, 20, 30, 30, 30}, kMiB), {}));
  EXPECT_FALSE(site.plateau);
  EXPECT_EQ(site.tail_fit.n, 0u);
}

TEST(PlateauTest, NoiseIsNeitherAndNoisyLeaksStaySuspects) {
  // Flat noise (100 MiB ± 10) is neither; a steady leak in noise (1 MiB/s ± 2 MiB), whose tail
  // alone is too noisy to tell from flat is no plateau: the tail has not shown that the growth
  // slowed.
  std::mt19937_64 rng(11);
  std::normal_distribution<double> noise(0, 1);
  int flat_plateaus = 0, flat_suspects = 0, leak_plateaus = 0, leak_suspects = 0;
  const int kSeries = 200;
  for (int k = 0; k < kSeries; ++k) {
    std::vector<int64_t> flat, leak;
    for (int i = 0; i < 12; ++i) {
      flat.push_back(std::llround(1000 + 100 * noise(rng)));  // units of 0.1 MiB
      leak.push_back(std::llround(1000 + 10 * i + 20 * noise(rng)));
    }
    const LeakSite& f = OnlySite(AnalyzeLeaks(OneSite(flat, kMiB / 10), {}));
    flat_plateaus += f.plateau;
    flat_suspects += f.suspect;
    const LeakSite& l = OnlySite(AnalyzeLeaks(OneSite(leak, kMiB / 10), {}));
    leak_plateaus += l.plateau;
    leak_suspects += l.suspect;
  }
  EXPECT_LE(flat_plateaus, 2) << "of " << kSeries;
  EXPECT_LE(flat_suspects, 2) << "of " << kSeries;
  EXPECT_LE(leak_plateaus, 10) << "of " << kSeries;  // 5 with this seed (2.5%)
  EXPECT_GE(leak_suspects, kSeries * 8 / 10) << "of " << kSeries;
}

}  // namespace
}  // namespace heaprec::analysis
