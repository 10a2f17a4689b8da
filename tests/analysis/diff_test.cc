// The diff (analysis/diff.h): the known difference of two hand-made profiles per function (cum,
// flat) and per stack, the noise test, and the pprof diff profile read back by our reader.
#include "analysis/diff.h"

#include <gtest/gtest.h>

#include <cmath>

#include "analysis/report.h"
#include "diff_profiles.h"
#include "profile/pprof_reader.h"
#include "profile/pprof_writer.h"
#include "profile/sampling_error.h"
#include "test_profiles.h"

namespace heaprec::analysis {
namespace {

using namespace ::heaprec::profile;
using namespace ::heaprec::test_support::diff;  // NOLINT: the profiles with a known difference

std::vector<std::pair<std::string, int64_t>> Changes(const std::vector<DiffFunction>& entries,
                                                     bool cum) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const DiffFunction& f : entries) {
    out.emplace_back(f.row.function, (cum ? f.cum : f.flat).change());
  }
  return out;
}

using Changed = std::vector<std::pair<std::string, int64_t>>;

TEST(DiffTest, KnownDifferenceOfExactProfiles) {
  Diff d = ComputeDiff(ExactBase(), ExactNew(), "");
  EXPECT_EQ(d.sample_type.type, "inuse_space");
  EXPECT_FALSE(d.sampled);
  EXPECT_EQ(d.total.base, 150000);
  EXPECT_EQ(d.total.next, 330000);
  EXPECT_EQ(d.functions, 5u);
  // By |change|. main, which only calls, is context (ReportRow::context): left out.
  EXPECT_EQ(Changes(d.by_cum, true),
            (Changed{{"Alloc", 203000}, {"Build", 180000}, {"Old", -10000}, {"New", 7000}}));
  EXPECT_EQ(Changes(d.by_flat, false),
            (Changed{{"Alloc", 203000}, {"Build", -20000}, {"Old", -10000}, {"New", 7000}}));
  ASSERT_EQ(d.stacks.size(), 5u);
  std::vector<std::pair<std::string, int64_t>> stacks;
  for (const DiffStack& s : d.stacks) {
    std::string names;
    for (const ReportRow& row : s.frames) names += row.function + ";";
    stacks.emplace_back(names, s.value.change());
  }
  EXPECT_EQ(stacks, (Changed{{"Alloc;Build;main;", 200000},
                             {"Build;main;", -20000},
                             {"Old;main;", -10000},
                             {"New;main;", 7000},
                             {"Alloc;main;", 3000}}));
  // Exact: no noise, every change is real.
  for (const DiffFunction& f : d.by_cum) {
    EXPECT_EQ(f.cum.noise(), 0) << f.row.function;
    EXPECT_EQ(f.cum.significance(), Significance::kSignificant) << f.row.function;
  }
  // Another sample index.
  Diff objects = ComputeDiff(ExactBase(), ExactNew(), "inuse_objects");
  EXPECT_EQ(objects.total.change(), 309 - 115);
}

TEST(DiffTest, NoiseMarking) {
  constexpr int64_t kT = 64 * 1024;
  // Alloc: 650 -> 660 objects of 1000 B, +10000 B: far inside the noise (~560 KB).
  // Build: 80 -> 800 objects of 4000 B, +2.88 MB: far outside it.
  Profile base = MakeProfile(kT, {{{kAlloc, kMain}, 650, 1000}, {{kBuild, kMain}, 80, 4000}});
  Profile next = MakeProfile(kT, {{{kAlloc, kMain}, 660, 1000}, {{kBuild, kMain}, 800, 4000}});
  Diff d = ComputeDiff(base, next, "inuse_space");
  ASSERT_TRUE(d.sampled);
  ASSERT_EQ(d.by_flat.size(), 2u);
  const DiffFunction& build = d.by_flat[0];
  const DiffFunction& alloc = d.by_flat[1];
  ASSERT_EQ(build.row.function, "Build");
  ASSERT_EQ(alloc.row.function, "Alloc");
  auto var = [&](int64_t objects, int64_t size) {
    return ValueVariance("inuse_space", objects * size, size, kT);
  };
  // noise = 1.96·sqrt(Var_base + Var_new).
  EXPECT_NEAR(alloc.flat.noise(), 1.959963984540054 * std::sqrt(var(650, 1000) + var(660, 1000)),
              1e-6);
  EXPECT_NEAR(build.flat.noise(), 1.959963984540054 * std::sqrt(var(80, 4000) + var(800, 4000)),
              1e-6);
  EXPECT_EQ(alloc.flat.significance(), Significance::kNoise);
  EXPECT_EQ(build.flat.significance(), Significance::kSignificant);
  EXPECT_EQ(d.total.significance(), Significance::kSignificant);
  // The boundary: a change just above the noise is significant, one just below is not.
  DiffValue v{.base = 0, .next = 100, .base_variance = 1000, .next_variance = 1602};
  EXPECT_NEAR(v.noise(), 99.977, 0.001);  // 1.96 * sqrt(2602)
  EXPECT_EQ(v.significance(), Significance::kSignificant);
  v.next_variance = 1604;  // 1.96 * sqrt(2604) = 100.02
  EXPECT_EQ(v.significance(), Significance::kNoise);
  v.next_variance = std::nan("");
  EXPECT_EQ(v.significance(), Significance::kUnknown);
}

TEST(DiffTest, DiffProfileReadsBackAsTheDifference) {
  Profile diff = MakeDiffProfile(ExactBase(), ExactNew());
  Profile back = ReadProfile(EncodeProfile(diff), "diff");
  EXPECT_EQ(back, diff);
  // Equal mappings, functions and locations are merged.
  EXPECT_EQ(back.mappings.size(), 1u);
  EXPECT_EQ(back.functions.size(), 5u);
  EXPECT_EQ(back.locations.size(), 5u);
  ASSERT_EQ(back.samples.size(), 7u);
  // NEW's samples first, as they are; then BASE's, negated and labelled.
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_GT(back.samples[i].values[3], 0);
    EXPECT_EQ(back.samples[i].labels.size(), 1u);
  }
  for (size_t i = 4; i < 7; ++i) {
    EXPECT_LT(back.samples[i].values[3], 0);
    ASSERT_EQ(back.samples[i].labels.size(), 2u);
    EXPECT_EQ(back.samples[i].labels[1], (Label{.key = "pprof::base", .str = "true"}));
  }
  EXPECT_EQ(back.samples[4].values, (std::vector<int64_t>{-100, -100000, -100, -100000}));
  // Our report of the diff profile: every function's net value is its change.
  Report r = ComputeReport(back, "inuse_space");
  Diff d = ComputeDiff(ExactBase(), ExactNew(), "inuse_space");
  EXPECT_EQ(r.total, d.total.change());
  for (const DiffFunction& f : d.by_cum) {
    bool found = false;
    for (const ReportRow& row : r.rows) {
      if (row.function != f.row.function) continue;
      found = true;
      EXPECT_EQ(row.cum, f.cum.change()) << row.function;
      EXPECT_EQ(row.flat, f.flat.change()) << row.function;
    }
    EXPECT_TRUE(found) << f.row.function;
  }
}

}  // namespace
}  // namespace heaprec::analysis
