// The top table (analysis/top_table.h): aggregation (flat/cum, inlined frames, recursion,
// unsymbolized addresses), the default sample index, the variances of sampled values, and the
// stacks by value.
#include "analysis/top_table.h"

#include <gtest/gtest.h>

#include <cmath>

#include "interval_profile.h"
#include "report_test_util.h"
#include "test_profiles.h"

namespace heaprec::analysis {
namespace {

using namespace ::heaprec::profile;
using namespace ::heaprec::testing::interval;  // NOLINT: the sampled profile with known variances
using testing::ExpectVariance;
using testing::Row;

TEST(ReportTest, FlatAndCumPerFunction) {
  Report r = ComputeReport(testing::MakeReportProfile(), "inuse_space");
  constexpr int64_t kKiB = 1024, kMiB = 1024 * 1024;
  EXPECT_EQ(r.total, 5 * kMiB);
  EXPECT_EQ(r.samples, 4u);
  ASSERT_EQ(r.rows.size(), 5u);
  // Flat goes to the innermost frame of the leaf location only; cum counts each function once
  // per sample, even when it recurses.
  EXPECT_EQ(r.rows[0].function, "Alloc");
  EXPECT_EQ(r.rows[0].flat, 3 * kMiB);
  EXPECT_EQ(r.rows[0].cum, 3 * kMiB);
  EXPECT_EQ(r.rows[1].function, "ns::Inner");
  EXPECT_EQ(r.rows[1].flat, 1 * kMiB);
  EXPECT_EQ(r.rows[1].cum, 4 * kMiB);
  EXPECT_EQ(r.rows[2].function, "main");
  EXPECT_EQ(r.rows[2].flat, 512 * kKiB);
  EXPECT_EQ(r.rows[2].cum, 5 * kMiB);
  EXPECT_EQ(r.rows[3].function, "0x1234");
  EXPECT_EQ(r.rows[3].mapping, "libfoo.so");
  EXPECT_EQ(r.rows[3].flat, 512 * kKiB);
  EXPECT_EQ(r.rows[4].function, "ns::Build");
  EXPECT_EQ(r.rows[4].flat, 0);
  EXPECT_EQ(r.rows[4].cum, 4 * kMiB);
}

TEST(ReportTest, DefaultSampleIndexIsTheProfiles) {
  Profile p = testing::MakeReportProfile();
  EXPECT_EQ(ComputeReport(p, "").sample_type.type, "inuse_space");
  p.default_sample_type = "";
  p.sample_types.push_back({"custom", "count"});
  for (Sample& s : p.samples) s.values.push_back(1);
  EXPECT_EQ(ComputeReport(p, "").sample_type.type, "custom");  // pprof's rule: the last one
}

TEST(ReportIntervalTest, VariancesAddPerRowAndSampleCountsOnceInCum) {
  Report r = ComputeReport(IntervalProfile(kInterval), "inuse_space");
  ASSERT_TRUE(r.sampled);
  double a = BytesVariance(kGroups[0], kInterval), b = BytesVariance(kGroups[1], kInterval),
         c = BytesVariance(kGroups[2], kInterval), d = BytesVariance(kGroups[3], kInterval);
  // 1 MiB objects at 64 KiB are sampled with near certainty (1 - p = exp(-16)): sigma ~ 500 B.
  EXPECT_LT(std::sqrt(d), 1e-3 * (2 << 20));
  // Flat: the samples whose leaf is the function. Cum: the samples with it anywhere, each once.
  ExpectVariance(Row(r, "Alloc").flat_variance, a + c);
  ExpectVariance(Row(r, "Alloc").cum_variance, a + c);
  ExpectVariance(Row(r, "Build").flat_variance, b);
  ExpectVariance(Row(r, "Build").cum_variance, a + b);
  ExpectVariance(Row(r, "main").flat_variance, d);
  ExpectVariance(Row(r, "main").cum_variance, a + b + c + d);  // C not twice
  ExpectVariance(r.total_variance, a + b + c + d);
  EXPECT_EQ(Row(r, "main").cum, r.total);

  // inuse_objects: Var = N·(1-p)/p, no s².
  Report objects = ComputeReport(IntervalProfile(kInterval), "inuse_objects");
  double p = 1 - std::exp(-1001.0 / kInterval);
  ExpectVariance(
      Row(objects, "Build").cum_variance,
      650 * (1 - p) / p + 80 * std::exp(-4001.0 / kInterval) / (1 - std::exp(-4001.0 / kInterval)));
}

TEST(ReportIntervalTest, StacksByValue) {
  Report r = ComputeReport(IntervalProfile(kInterval), "inuse_space", /*with_stacks=*/true);
  ASSERT_EQ(r.stacks.size(), 4u);
  auto names = [&](const ReportStack& s) {
    std::string out;
    for (size_t f : s.frames) out += r.rows[f].function + ";";
    return out;
  };
  EXPECT_EQ(names(r.stacks[0]), "main;");  // 2 MiB
  EXPECT_EQ(r.stacks[0].value, 2 << 20);
  EXPECT_EQ(names(r.stacks[1]), "Alloc;Build;main;");
  EXPECT_EQ(r.stacks[1].value, 650000);
  ExpectVariance(r.stacks[1].variance, BytesVariance(kGroups[0], kInterval));
  EXPECT_EQ(names(r.stacks[2]), "Build;main;");
  EXPECT_EQ(names(r.stacks[3]), "Alloc;main;main;");
  EXPECT_TRUE(ComputeReport(IntervalProfile(kInterval), "inuse_space").stacks.empty());
}

}  // namespace
}  // namespace heaprec::analysis
