// Profile file names (core/profile_file.h): the output template's directives, sequence numbers
// before the extension, and what does not fit.
#include "core/profile_file.h"

#include <gtest/gtest.h>
#include <limits.h>

#include <climits>
#include <string>

namespace heaprec {
namespace {

std::string Expand(const char* pattern, unsigned sequence, const char* program = "server") {
  char out[PATH_MAX];
  if (!ExpandOutputTemplate(pattern, 1234, program, 1796000000, sequence, out, sizeof(out)))
    return "<overflow>";
  return out;
}

TEST(OutputTemplateTest, Directives) {
  EXPECT_EQ(Expand("/tmp/heap.%e.%p.pb.gz", 0), "/tmp/heap.server.1234.pb.gz");
  EXPECT_EQ(Expand("/tmp/%t.pb.gz", 0), "/tmp/20261130T005320Z.pb.gz");
  EXPECT_EQ(Expand("/tmp/100%%-%x", 0), "/tmp/100%-%x");
}

TEST(OutputTemplateTest, SequenceNumbersGoBeforeTheExtension) {
  EXPECT_EQ(Expand("/tmp/heap.%p.pb.gz", 3), "/tmp/heap.1234.0003.pb.gz");
  EXPECT_EQ(Expand("/tmp/heap.%p", 12), "/tmp/heap.1234.0012");
}

TEST(OutputTemplateTest, ProgramNamesCannotEscapeTheDirectory) {
  EXPECT_EQ(Expand("/tmp/%e.pb.gz", 0, "../../etc/x y"), "/tmp/.._.._etc_x_y.pb.gz");
}

TEST(OutputTemplateTest, OverflowIsAnError) {
  std::string long_pattern(PATH_MAX - 5, 'a');
  long_pattern += "%p%p";
  EXPECT_EQ(Expand(long_pattern.c_str(), 0), "<overflow>");
}

TEST(OutputTemplateTest, ResultFillingTheBufferExactly) {
  char out[8];
  EXPECT_TRUE(ExpandOutputTemplate("abcdefg", 1, "p", 0, 0, out, sizeof(out)));
  EXPECT_STREQ(out, "abcdefg");
  EXPECT_FALSE(ExpandOutputTemplate("abcdefgh", 1, "p", 0, 0, out, sizeof(out)));
  EXPECT_TRUE(ExpandOutputTemplate("a.pb.gz", 1, "p", 0, 0, out, sizeof(out)));
  EXPECT_FALSE(ExpandOutputTemplate("a.pb.gz", 1, "p", 0, 1, out, sizeof(out)));  // a.0001.pb.gz
}

TEST(OutputTemplateTest, ZeroCapacityWritesNothing) {
  char out[4] = {'x', 'y', 'z', 'w'};
  EXPECT_FALSE(ExpandOutputTemplate("", 1, "p", 0, 0, out, 0));  // not even the terminator fits
  EXPECT_FALSE(ExpandOutputTemplate("", 1, "p", 0, 7, out, 0));
  EXPECT_FALSE(ExpandOutputTemplate("a", 1, "p", 0, 0, out, 0));
  EXPECT_FALSE(ExpandOutputTemplate("", 1, "p", 0, 0, nullptr, 0));
  EXPECT_EQ(std::string(out, 4), "xyzw");
  EXPECT_TRUE(ExpandOutputTemplate("", 1, "p", 0, 0, out, 1));
  EXPECT_EQ(out[0], '\0');
}

std::string ExpandTime(long long unix_seconds) {
  char out[PATH_MAX];
  if (!ExpandOutputTemplate("%t", 1, "p", unix_seconds, 0, out, sizeof(out))) return "<overflow>";
  return out;
}

TEST(OutputTemplateTest, TimesFarFromNow) {
  EXPECT_EQ(ExpandTime(0), "19700101T000000Z");
  EXPECT_EQ(ExpandTime(-1), "19691231T235959Z");
  EXPECT_EQ(ExpandTime(253402300799), "99991231T235959Z");
  EXPECT_EQ(ExpandTime(253402300800), "100000101T000000Z");
  EXPECT_EQ(ExpandTime(-62167219200), "00000101T000000Z");  // year 0 (1 BC)
  EXPECT_EQ(ExpandTime(-62167219201), "-00011231T235959Z");
  // The largest time gmtime_r breaks down has tm_year == INT_MAX: the year, INT_MAX + 1900, does
  // not fit in an int (this was signed overflow).
  constexpr long long kLastSecond = 67768036191676799;  // 2147485547-12-31T23:59:59Z
  EXPECT_EQ(ExpandTime(kLastSecond), "21474855471231T235959Z");
  EXPECT_EQ(ExpandTime(kLastSecond - 86400 * 365), "21474855461231T235959Z");
  // Beyond it gmtime_r gives up and the seconds are written as they are.
  EXPECT_EQ(ExpandTime(kLastSecond + 1), "67768036191676800");
  EXPECT_EQ(ExpandTime(LLONG_MAX), "9223372036854775807");
  EXPECT_EQ(ExpandTime(LLONG_MIN), "-9223372036854775808");
}

}  // namespace
}  // namespace heaprec
