#include <gtest/gtest.h>
#include <limits.h>

#include <string>

#include "preload/profile_output.h"

namespace heaprec::preload {
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

}  // namespace
}  // namespace heaprec::preload
