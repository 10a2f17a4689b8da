// The formatters every output shares (render/format.h).
#include "render/format.h"

#include <gtest/gtest.h>

#include <cmath>

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

}  // namespace
}  // namespace heaprec::render
