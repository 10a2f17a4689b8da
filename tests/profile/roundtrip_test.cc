// Encode -> decode round trips of the pprof model, gzipped and raw.
#include <gtest/gtest.h>

#include "profile/gzip.h"
#include "profile/pprof_reader.h"
#include "profile/pprof_writer.h"
#include "test_profiles.h"

namespace heaprec {
namespace {

size_t CountOccurrences(const std::string& haystack, const std::string& needle) {
  size_t count = 0;
  for (size_t pos = haystack.find(needle); pos != std::string::npos;
       pos = haystack.find(needle, pos + 1)) {
    ++count;
  }
  return count;
}

TEST(RoundTripTest, GzipPreservesEveryField) {
  Profile p = testing::MakeFullProfile();
  std::string bytes = EncodeProfile(p);
  ASSERT_GE(bytes.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(bytes[1]), 0x8b);
  EXPECT_EQ(ReadProfile(bytes), p);
}

TEST(RoundTripTest, RawPreservesEveryField) {
  Profile p = testing::MakeFullProfile();
  EXPECT_EQ(ReadProfile(EncodeProfile(p, /*gzip=*/false)), p);
}

TEST(RoundTripTest, EmptyProfile) {
  Profile p;
  EXPECT_EQ(ReadProfile(EncodeProfile(p)), p);
  EXPECT_EQ(ReadProfile(EncodeProfile(p, false)), p);
}

TEST(RoundTripTest, StringsAreDeduplicated) {
  Profile p = testing::MakeFullProfile();
  p.comments.push_back("inuse_space");  // also a sample type and the default sample type
  std::string raw = EncodeProfile(p, false);
  EXPECT_EQ(CountOccurrences(raw, "inuse_space"), 1u);
  EXPECT_EQ(CountOccurrences(raw, "bytes"), 1u);
  EXPECT_EQ(ReadProfile(raw), p);
}

TEST(RoundTripTest, ConcatenatedGzipMembersAreOneStream) {
  // gzip(1) and Go's reader accept concatenated members; so must we.
  Profile p = testing::MakeFullProfile();
  std::string raw = EncodeProfile(p, false);
  size_t cut = raw.size() / 2;
  std::string two = internal::Gzip(raw.substr(0, cut)) + internal::Gzip(raw.substr(cut));
  EXPECT_EQ(ReadProfile(two), p);
}

}  // namespace
}  // namespace heaprec
