// The formatters every output shares (render/format.h): units and signs, changes, durations,
// margins, percentages, how a per-object profile was sampled, and top N.
#include "render/format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "render/utf8.h"

namespace heaprec::render {
namespace {

TEST(FormatValueTest, BytesAndCounts) {
  EXPECT_EQ(FormatValue(0, "bytes"), "0 B");
  EXPECT_EQ(FormatValue(1023, "bytes"), "1023 B");
  EXPECT_EQ(FormatValue(1024, "bytes"), "1.0 KiB");
  EXPECT_EQ(FormatValue(1536, "bytes"), "1.5 KiB");
  EXPECT_EQ(FormatValue(5LL << 20, "bytes"), "5.0 MiB");
  EXPECT_EQ(FormatValue(3LL << 30, "bytes"), "3.0 GiB");
  EXPECT_EQ(FormatValue(-2048, "bytes"), "-2.0 KiB");
  EXPECT_EQ(FormatValue(42, "count"), "42");
  EXPECT_EQ(FormatValue(42, "nanoseconds"), "42 nanoseconds");
  EXPECT_EQ(FormatMargin(100, "bytes"), "±20 B");
  EXPECT_EQ(FormatMargin(std::nan(""), "bytes"), "±?");
  EXPECT_EQ(PadLeft("±1 B", 6), "  ±1 B");
}

TEST(FormatValueTest, UnitsAndNegativeValues) {
  EXPECT_EQ(FormatValue(-1023, "bytes"), "-1023 B");
  EXPECT_EQ(FormatValue(-1024, "bytes"), "-1.0 KiB");
  EXPECT_EQ(FormatValue(-(5LL << 20), "bytes"), "-5.0 MiB");
  EXPECT_EQ(FormatValue(2LL << 40, "bytes"), "2.0 TiB");
  EXPECT_EQ(FormatValue(3LL << 50, "bytes"), "3072.0 TiB") << "TiB is the largest unit";
  EXPECT_EQ(FormatValue(-7, "count"), "-7");
  EXPECT_EQ(FormatValue(7, ""), "7");
  EXPECT_EQ(FormatValue(-7, "nanoseconds"), "-7 nanoseconds");
  EXPECT_EQ(FormatBytes(1535.6), "1.5 KiB");
  EXPECT_EQ(FormatBytes(0.4), "0 B");
}

TEST(FormatChangeTest, SignAndUnit) {
  EXPECT_EQ(FormatChange(1536, "bytes"), "+1.5 KiB");
  EXPECT_EQ(FormatChange(-2048, "bytes"), "-2.0 KiB");
  EXPECT_EQ(FormatChange(0, "bytes"), "0 B");
  EXPECT_EQ(FormatChange(5, "count"), "+5");
  EXPECT_EQ(FormatChange(-5, "count"), "-5");
  EXPECT_EQ(FormatChange(0, "count"), "0");
}

TEST(FormatSecondsTest, Thresholds) {
  EXPECT_EQ(FormatSeconds(0), "0 ms");
  EXPECT_EQ(FormatSeconds(0.85), "850 ms");
  EXPECT_EQ(FormatSeconds(0.999), "999 ms");
  EXPECT_EQ(FormatSeconds(1), "1.0 s");
  EXPECT_EQ(FormatSeconds(12.34), "12.3 s");
  EXPECT_EQ(FormatSeconds(119.9), "119.9 s");
  EXPECT_EQ(FormatSeconds(120), "2.0 min");
  EXPECT_EQ(FormatSeconds(246), "4.1 min");
  EXPECT_EQ(FormatSeconds(7199), "120.0 min");
  EXPECT_EQ(FormatSeconds(7200), "2.0 h");
  EXPECT_EQ(FormatSeconds(-0.5), "-500 ms") << "thresholds on the magnitude";
  EXPECT_EQ(FormatSeconds(-120), "-2.0 min");
}

TEST(FormatMarginTest, HalfWidthOfThe95PercentInterval) {
  EXPECT_EQ(FormatMargin(0, "bytes"), "±0 B");
  EXPECT_EQ(FormatMargin(1 << 20, "count"), "±2007");  // 1.96 · 1024
  EXPECT_EQ(FormatMargin(std::numeric_limits<double>::infinity(), "bytes"), "±?");
}

TEST(FormatPercentTest, PercentOfATotal) {
  EXPECT_DOUBLE_EQ(Percent(1, 8), 12.5);
  EXPECT_EQ(Percent(5, 0), 0.0) << "no division by zero";
  EXPECT_DOUBLE_EQ(Percent(-1, 4), -25.0);
  EXPECT_EQ(FormatPercent(12.5), "12.5%");
  EXPECT_EQ(FormatPercent(Percent(2, 3)), "66.7%");
  EXPECT_EQ(FormatFixed(1.005, 0), "1");
}

TEST(FormatObjectSamplingTest, PeriodOneIsExact) {
  EXPECT_EQ(FormatObjectSampling(1), "every object (exact)");
  EXPECT_EQ(FormatObjectSampling(0), "every object (exact)");
  EXPECT_EQ(FormatObjectSampling(100), "1 in 100 objects");
}

TEST(RowsShownTest, TopZeroIsAll) {
  EXPECT_EQ(RowsShown(7, 0), 7u);
  EXPECT_EQ(RowsShown(7, 3), 3u);
  EXPECT_EQ(RowsShown(2, 3), 2u);
}

}  // namespace
}  // namespace heaprec::render
