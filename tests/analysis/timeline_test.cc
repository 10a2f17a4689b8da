#include "analysis/timeline.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "analysis/profile_header.h"
#include "analysis/profile_view.h"
#include "preload/dump/timeline_points.h"
#include "profile/profile.h"
#include "schema/profile_schema.h"

namespace heaprec::analysis {
namespace {

// What the preload library writes, read back.
std::string Written(const preload::TimelinePoints& points, const preload::TimelineHeader& header,
                    const preload::TimelinePoint& last) {
  std::string text(65536, '\0');
  EXPECT_TRUE(points.Format(header, last, text.data(), text.size()));
  text.resize(text.find('\0'));
  return text;
}

TEST(Timeline, ReadsWhatThePreloadLibraryWrites) {
  preload::TimelinePoints points;
  points.Append({0, 1000, 1000, 4096, 1000});
  points.Append({100, 5000, 9000, 8192, 12000});
  const std::string text =
      Written(points, {1'700'000'000'000'000'000u, 524288, 100, 9000}, {250, -20, 5000, 0, 12500});
  const std::optional<Timeline> t = ParseTimeline(text);
  ASSERT_TRUE(t.has_value()) << text;
  EXPECT_EQ(t->start_ns, 1'700'000'000'000'000'000u);
  EXPECT_EQ(t->interval, 524288u);
  EXPECT_EQ(t->peak_ms, 100u);
  EXPECT_EQ(t->peak, 9000);
  ASSERT_EQ(t->points.size(), 3u);
  EXPECT_EQ(t->points[1].t_ms, 100u);
  EXPECT_EQ(t->points[1].live, 5000);
  EXPECT_EQ(t->points[1].max, 9000);
  EXPECT_EQ(t->points[1].rss, 8192u);
  EXPECT_EQ(t->points[1].allocated, 12000);
  EXPECT_EQ(t->points[2].live, -20);  // an estimate can dip below zero
  EXPECT_EQ(t->duration_ms(), 250u);
}

TEST(Timeline, ErrorIsThePerByteModels) {
  Timeline t;
  t.interval = 524288;
  EXPECT_NEAR(t.Error(100 << 20), 1.96 * std::sqrt(524288.0 * (100 << 20)), 1e-6);
  EXPECT_EQ(t.Error(0), 0);
  t.interval = 1;
  EXPECT_EQ(t.Error(100 << 20), 0);
}

TEST(Timeline, MalformedOrForeignCommentsAreNoTimeline) {
  const std::string p = schema::kTimelinePrefix;
  EXPECT_FALSE(ParseTimeline("pid=1 reason=exit"));
  EXPECT_FALSE(ParseTimeline(p));
  EXPECT_FALSE(ParseTimeline(p + " start_ns=1 interval=2 peak_ms=3 peak=4 points="));
  EXPECT_FALSE(ParseTimeline(p + " start_ns=1 interval=2 peak_ms=3 peak=4 points=1,2,3"));
  EXPECT_FALSE(ParseTimeline(p + " start_ns=1 interval=2 peak_ms=3 peak=4 points=1,2,3,4,5,6"));
  EXPECT_FALSE(ParseTimeline(p + " start_ns=x interval=2 peak_ms=3 peak=4 points=1,2,3,4,5"));
  EXPECT_FALSE(ParseTimeline(p + " interval=2 start_ns=1 peak_ms=3 peak=4 points=1,2,3,4,5"));
  EXPECT_FALSE(ParseTimeline(p + " start_ns=1 interval=-2 peak_ms=3 peak=4 points=1,2,3,4,5"));
  // Out of order: a truncated or spliced string.
  EXPECT_FALSE(
      ParseTimeline(p + " start_ns=1 interval=2 peak_ms=3 peak=4 points=9,2,3,4,5;1,2,3,4,5"));
  EXPECT_TRUE(ParseTimeline(p + " start_ns=1 interval=2 peak_ms=3 peak=4 points=1,2,3,4,5"));
}

TEST(Timeline, TheHeaderKeepsItOutOfTheCommentsPeopleRead) {
  profile::Profile profile;
  profile.period = 524288;
  profile.comments = {"pid=42 reason=exit",
                      std::string(schema::kTimelinePrefix) +
                          " start_ns=1 interval=524288 peak_ms=0 peak=7 points=0,7,7,0,7"};
  const ProfileHeader header = HeaderOf(profile);
  ASSERT_EQ(header.comments.size(), 1u);
  EXPECT_EQ(header.comments[0], "pid=42 reason=exit");
  ASSERT_TRUE(header.timeline.has_value());
  EXPECT_EQ(header.timeline->peak, 7);
  // And fields are never read from it.
  EXPECT_EQ(CommentField(profile, "peak"), std::nullopt);
  EXPECT_EQ(CommentField(profile, "pid"), "42");
}

}  // namespace
}  // namespace heaprec::analysis
