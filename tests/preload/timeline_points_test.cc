#include "preload/dump/timeline_points.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "schema/profile_schema.h"

namespace heaprec::preload {
namespace {

TimelinePoint At(std::uint64_t t_ms, std::int64_t live, std::int64_t max) {
  return {t_ms, live, max, static_cast<std::uint64_t>(live) * 2, static_cast<std::int64_t>(t_ms)};
}

// The points of a formatted comment: "T,L,M,R,A;..." after "points=".
std::vector<std::vector<long long>> PointsOf(const std::string& text) {
  std::vector<std::vector<long long>> points;
  const std::size_t at = text.find("points=");
  EXPECT_NE(at, std::string::npos) << text;
  const char* p = text.c_str() + at + 7;
  while (*p != '\0') {
    std::vector<long long> fields(5);
    int used = 0;
    EXPECT_EQ(std::sscanf(p, "%lld,%lld,%lld,%lld,%lld%n", &fields[0], &fields[1], &fields[2],
                          &fields[3], &fields[4], &used),
              5)
        << p;
    points.push_back(fields);
    p += used;
    if (*p == ';') ++p;
  }
  return points;
}

TEST(TimelinePoints, FormatsTheHeaderThenEveryPointThenNow) {
  TimelinePoints points;
  points.Append(At(0, 10, 10));
  points.Append(At(100, 30, 50));
  std::string text(4096, '\0');
  ASSERT_TRUE(points.Format({1700000000000000000u, 524288, 100, 50}, At(150, 20, 30), text.data(),
                            text.size()));
  text.resize(text.find('\0'));
  EXPECT_EQ(text, std::string(schema::kTimelinePrefix) +
                      " start_ns=1700000000000000000 interval=524288 peak_ms=100 peak=50"
                      " points=0,10,10,20,0;100,30,50,60,100;150,20,30,40,150");
}

TEST(TimelinePoints, AFullArrayMergesNeighboursKeepingTheirMaximumAndDoublesTheSpacing) {
  TimelinePoints points;
  EXPECT_EQ(points.spacing_ms(), TimelinePoints::kFirstSpacingMs);
  for (std::uint64_t i = 0; i < TimelinePoints::kCapacity; ++i) {
    // One spike, at an even index: merging must keep it as its pair's maximum.
    points.Append(At(i * 100, static_cast<std::int64_t>(i), i == 500 ? 1'000'000 : i));
  }
  ASSERT_EQ(points.count(), TimelinePoints::kCapacity);
  points.Append(At(TimelinePoints::kCapacity * 100, 7, 7));
  EXPECT_EQ(points.count(), TimelinePoints::kCapacity / 2 + 1);
  EXPECT_EQ(points.spacing_ms(), 2 * TimelinePoints::kFirstSpacingMs);
  // Each merged point is its pair's later one, with the pair's highest maximum.
  EXPECT_EQ(points[0].t_ms, 100u);
  EXPECT_EQ(points[0].live, 1);
  EXPECT_EQ(points[250].t_ms, 50100u);
  EXPECT_EQ(points[250].max, 1'000'000);
  EXPECT_EQ(points[TimelinePoints::kCapacity / 2].live, 7);
  for (std::size_t i = 1; i < points.count(); ++i) EXPECT_LT(points[i - 1].t_ms, points[i].t_ms);
}

TEST(TimelinePoints, AWeekLongRunStaysBoundedWithItsPeak) {
  TimelinePoints points;
  std::uint64_t t = 0;
  std::int64_t highest = 0;
  // A week, a point whenever the spacing allows, a peak in the middle.
  const std::uint64_t week_ms = 7ull * 24 * 3600 * 1000;
  while (t < week_ms) {
    const std::int64_t max = (t / 1000 == week_ms / 2000) ? 5'000'000'000 : 1000;
    if (max > highest) highest = max;
    points.Append(At(t, 1000, max));
    t += points.spacing_ms();
  }
  EXPECT_LE(points.count(), TimelinePoints::kCapacity);
  std::int64_t kept = 0;
  for (std::size_t i = 0; i < points.count(); ++i) kept = std::max(kept, points[i].max);
  EXPECT_EQ(kept, highest);
  EXPECT_GE(points.spacing_ms(), week_ms / TimelinePoints::kCapacity / 2);
}

TEST(TimelinePoints, TooLittleRoomMergesPointsInTheTextUntilTheyFit) {
  TimelinePoints points;
  for (std::uint64_t i = 0; i < TimelinePoints::kCapacity; ++i) {
    points.Append(At(i * 100, 123456789, i == 3 ? 999999999 : 123456789));
  }
  const std::size_t capacity = 4000;  // room for about 80 of the 1,025 points
  std::string text(capacity, '\0');
  ASSERT_TRUE(points.Format({1, 1, 300, 999999999}, At(200000, 1, 1), text.data(), capacity));
  text.resize(text.find('\0'));
  const auto parsed = PointsOf(text);
  EXPECT_LT(parsed.size(), 100u);
  EXPECT_GT(parsed.size(), 20u);  // the stride is the smallest that fits, not everything merged
  EXPECT_EQ(parsed.front()[2], 999999999);  // the spike survives as its span's maximum
  EXPECT_EQ(parsed.back()[0], 200000);      // and the last point is now
  // The array itself is untouched.
  EXPECT_EQ(points.count(), TimelinePoints::kCapacity);
}

TEST(TimelinePoints, NoRoomForEvenTheHeaderIsFalse) {
  TimelinePoints points;
  points.Append(At(0, 1, 1));
  char text[16];
  EXPECT_FALSE(points.Format({1, 1, 0, 1}, At(1, 1, 1), text, sizeof text));
}

}  // namespace
}  // namespace heaprec::preload
