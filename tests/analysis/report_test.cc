// The report (analysis/report.h), the top table: aggregation (flat/cum, inlined frames, recursion,
// unsymbolized addresses), the default sample index, the variances of sampled values, the stacks
// by value, and the allocation sites: flat on the first frame that is the user's, the line of the
// call that holds the most, the frames that only lead to the sites (context), one row per line,
// full and short names.
#include "analysis/report.h"

#include <gtest/gtest.h>

#include <cmath>

#include "interval_profile.h"
#include "report_test_util.h"
#include "runtime_stack_profile.h"
#include "test_profiles.h"

namespace heaprec::analysis {
namespace {

using namespace ::heaprec::profile;
using namespace ::heaprec::test_support::interval;  // NOLINT: the profile with known variances
using test_support::ExpectVariance;
using test_support::Row;

TEST(ReportTest, FlatAndCumPerFunction) {
  Report r = ComputeReport(test_support::MakeReportProfile(), "inuse_space");
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
  Profile p = test_support::MakeReportProfile();
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

using test_support::runtime_stack::kKiB;
using test_support::runtime_stack::kMiB;
using test_support::runtime_stack::MakeRuntimeStackProfile;

// "function:line flat cum [context]" per row, in the report's order.
std::string Rows(const Report& r) {
  std::string out;
  for (const ReportRow& row : r.rows) {
    out += row.function + ":" + std::to_string(row.line) + " " + std::to_string(row.flat) + " " +
           std::to_string(row.cum) + (row.context ? " context" : "") + "\n";
  }
  return out;
}

TEST(ReportSiteTest, FlatGoesToTheUsersFrameWithItsCallLine) {
  Report r = ComputeReport(MakeRuntimeStackProfile(), "inuse_space");
  EXPECT_EQ(r.total, 6 * kMiB + 512 * kKiB);
  // Store::Put holds all that went through the allocator from it; its row shows line 12, the call
  // that holds 3 of its 6 MiB (not 10, where the function starts). main's line is the call that
  // holds most of its cum (30: 4 MiB). malloc is the site of the stack that is all runtime.
  EXPECT_EQ(Rows(r),
            "Store::Put:12 6291456 6291456\n"
            "malloc:0 524288 524288\n"
            "__libc_start_call_main:0 0 6815744 context\n"
            "_start:0 0 6815744 context\n"
            "main:30 0 6291456 context\n"
            "_IO_file_doallocate:0 0 524288 context\n");
  const ReportRow& put = Row(r, "Store::Put");
  EXPECT_EQ(put.file, "/src/store.cc");
  EXPECT_EQ(put.Label(), "Store::Put store.cc:12");
  // The frames called from the sites are in no row: they hold nothing from a site's view.
  for (const ReportRow& row : r.rows) {
    EXPECT_NE(row.function, "operator new");
    EXPECT_NE(row.function, "std::vector::_M_realloc_insert");
  }
}

TEST(ReportSiteTest, AllFramesPutsTheFlatBackOnTheAllocator) {
  Report r = ComputeReport(MakeRuntimeStackProfile(), "inuse_space", false,
                           {.sites = SiteRule::WithoutDefaults()});
  // Nothing is context without the defaults, main included.
  EXPECT_EQ(Rows(r),
            "malloc:0 6815744 6815744\n"
            "__libc_start_call_main:0 0 6815744\n"
            "_start:0 0 6815744\n"
            "Store::Put:12 0 6291456\n"
            "main:30 0 6291456\n"
            "operator new:0 0 6291456\n"
            "std::vector::_M_realloc_insert:440 0 5242880\n"
            "_IO_file_doallocate:0 0 524288\n");
}

TEST(ReportSiteTest, UserSkipAndKeepPatterns) {
  // Store::Put skipped as well: main is the site, so no longer context.
  SiteRule skip;
  skip.AddSkip("^Store::");
  Report r = ComputeReport(MakeRuntimeStackProfile(), "inuse_space", false, {.sites = skip});
  EXPECT_EQ(Row(r, "main").flat, 6 * kMiB);
  EXPECT_EQ(Row(r, "main").line, 30);
  EXPECT_FALSE(Row(r, "main").context);
  EXPECT_THROW(Row(r, "Store::Put"), std::runtime_error) << "called from the site: no row";
  // std::vector kept: the flat of the samples through it is its own, at its lines.
  SiteRule keep;
  keep.AddKeep("^std::vector::");
  r = ComputeReport(MakeRuntimeStackProfile(), "inuse_space", false, {.sites = keep});
  EXPECT_EQ(Row(r, "std::vector::_M_realloc_insert").flat, 5 * kMiB);
  EXPECT_EQ(Row(r, "std::vector::_M_realloc_insert").line, 440);
  EXPECT_EQ(Row(r, "Store::Put").flat, 1 * kMiB);
  EXPECT_EQ(Row(r, "Store::Put").line, 14);
}

TEST(ReportSiteTest, OneRowPerLine) {
  Report r = ComputeReport(MakeRuntimeStackProfile(), "inuse_space", false, {.lines = true});
  EXPECT_EQ(Rows(r),
            "Store::Put:12 3145728 3145728\n"
            "Store::Put:22 2097152 2097152\n"
            "Store::Put:14 1048576 1048576\n"
            "malloc:0 524288 524288\n"
            "__libc_start_call_main:0 0 6815744 context\n"
            "_start:0 0 6815744 context\n"
            "main:30 0 4194304 context\n"
            "main:31 0 2097152 context\n"
            "_IO_file_doallocate:0 0 524288 context\n");
}

TEST(ReportSiteTest, FullNamesKeepOverloadsApart) {
  Report r = ComputeReport(MakeRuntimeStackProfile(), "inuse_space", false, {.full_names = true});
  const ReportRow& by_int = Row(r, "Store::Put(int)");
  EXPECT_EQ(by_int.flat, 4 * kMiB);
  EXPECT_EQ(by_int.line, 12);
  const ReportRow& by_string = Row(r,
                                   "Store::Put(std::__cxx11::basic_string<char, "
                                   "std::char_traits<char>, std::allocator<char> > const&)");
  EXPECT_EQ(by_string.flat, 2 * kMiB);
  EXPECT_EQ(by_string.line, 22);
  EXPECT_NE(by_int.key, by_string.key);
  // The same sites as with short names (the rule reads the short names): the full name of
  // std::vector<int>::_M_realloc_insert starts with its return type, "void std::vector<...".
  EXPECT_EQ(r.rows.size(), ComputeReport(MakeRuntimeStackProfile(), "inuse_space").rows.size() + 1);
  for (const ReportRow& row : r.rows)
    EXPECT_EQ(row.function.find("_M_realloc_insert"), std::string::npos);
}

TEST(ReportSiteTest, StacksFromTheSiteWithEachFramesLine) {
  Report r = ComputeReport(MakeRuntimeStackProfile(), "inuse_space", /*with_stacks=*/true);
  auto stack = [&](const ReportStack& s) {
    std::string out;
    for (size_t i = 0; i < s.frames.size(); ++i) {
      out += r.rows[s.frames[i]].function + ":" + std::to_string(s.lines[i]) + ";";
    }
    return out;
  };
  // Stacks A, B and C are three: the same functions at different lines are different stacks.
  ASSERT_EQ(r.stacks.size(), 4u);
  EXPECT_EQ(stack(r.stacks[0]), "Store::Put:12;main:30;__libc_start_call_main:0;_start:0;");
  EXPECT_EQ(r.stacks[0].value, 3 * kMiB);
  EXPECT_EQ(stack(r.stacks[1]), "Store::Put:22;main:31;__libc_start_call_main:0;_start:0;");
  EXPECT_EQ(stack(r.stacks[2]), "Store::Put:14;main:30;__libc_start_call_main:0;_start:0;");
  EXPECT_EQ(stack(r.stacks[3]),
            "malloc:0;_IO_file_doallocate:0;__libc_start_call_main:0;_start:0;");
  for (const ReportStack& s : r.stacks) EXPECT_EQ(s.frames.size(), s.lines.size());
}

TEST(ReportSiteTest, EntryPoints) {
  EXPECT_TRUE(IsEntryPoint("main"));
  EXPECT_TRUE(IsEntryPoint("leak::main"));
  EXPECT_TRUE(IsEntryPoint("<main>"));
  EXPECT_FALSE(IsEntryPoint("mainloop"));
  EXPECT_FALSE(IsEntryPoint("main_window"));
  EXPECT_FALSE(IsEntryPoint("Store::Put"));
  // main that allocates itself is a site, not context.
  Report r = ComputeReport(test_support::MakeReportProfile(), "inuse_space");
  EXPECT_FALSE(Row(r, "main").context);
  EXPECT_EQ(Row(r, "main").flat, 512 * kKiB);
}

}  // namespace
}  // namespace heaprec::analysis
