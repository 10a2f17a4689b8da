// A sample's age (analysis/object_age.h): the age_ns label, an older file's oldest_alloc_ns against
// the profile's time, and neither.
#include "analysis/object_age.h"

#include <gtest/gtest.h>

#include "test_profiles.h"

namespace heaprec::analysis {
namespace {

using namespace ::heaprec::profile;

TEST(ObjectAgeTest, AgeLabelOrOldestAllocationTime) {
  Profile p = test_support::MakeNativeHeapProfile(1);
  p.time_nanos = 1700000000000000000;
  Sample s;
  EXPECT_EQ(SampleAgeNanos(p, s), -1);
  s.labels = {{.key = "bytes", .num = 64, .num_unit = "bytes"},
              {.key = "oldest_alloc_ns", .num = p.time_nanos - 2500, .num_unit = "nanoseconds"}};
  EXPECT_EQ(SampleAgeNanos(p, s), 2500);
  s.labels[1].num = p.time_nanos + 10;  // allocated "after" the profile: the clock was set back
  EXPECT_EQ(SampleAgeNanos(p, s), 0);
  s.labels.push_back({.key = "age_ns", .num = 0, .num_unit = "nanoseconds"});  // just allocated
  EXPECT_EQ(SampleAgeNanos(p, s), 0);
  s.labels.back().num = 1500000000;
  EXPECT_EQ(SampleAgeNanos(p, s), 1500000000);  // age_ns wins over the older label
}

}  // namespace
}  // namespace heaprec::analysis
