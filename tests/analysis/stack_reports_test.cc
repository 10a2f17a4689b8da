// The stacks of a profile (analysis/stack_reports.h): one report for a profile; for a difference
// profile (MakeDiffProfile), one per side with the side's values as recorded; the sample index
// checked on the whole profile.
#include "analysis/stack_reports.h"

#include <gtest/gtest.h>

#include "analysis/diff.h"
#include "diff_profiles.h"
#include "test_profiles.h"

namespace heaprec::analysis {
namespace {

using namespace ::heaprec::test_support::diff;  // NOLINT: the profiles with a known difference

TEST(StackReportsTest, OneReportForAProfile) {
  StackReports r = ComputeStackReports(ExactNew(), "");
  EXPECT_FALSE(r.base.has_value());
  EXPECT_EQ(r.next.total, ComputeReport(ExactNew(), "").total);
  EXPECT_EQ(r.next.stacks.size(), ComputeReport(ExactNew(), "", true).stacks.size());
  EXPECT_FALSE(r.next.stacks.empty());
}

TEST(StackReportsTest, ADifferenceProfileHasBothSidesAsRecorded) {
  StackReports r = ComputeStackReports(MakeDiffProfile(ExactBase(), ExactNew()), "inuse_space");
  ASSERT_TRUE(r.base.has_value());
  EXPECT_EQ(r.next.total, ComputeReport(ExactNew(), "inuse_space").total);
  const Report base = ComputeReport(ExactBase(), "inuse_space", /*with_stacks=*/true);
  EXPECT_GT(base.total, 0);
  EXPECT_EQ(r.base->total, base.total);  // BASE's values negated back
  EXPECT_EQ(r.base->stacks.size(), base.stacks.size());
}

TEST(StackReportsTest, UnknownSampleIndexForTheWholeProfile) {
  EXPECT_THROW(ComputeStackReports(MakeDiffProfile(ExactBase(), ExactNew()), "cpu"),
               UnknownSampleIndexError);
}

}  // namespace
}  // namespace heaprec::analysis
