// Encode -> decode round trips of the pprof model, gzipped and raw.
#include <gtest/gtest.h>

#include "profile/gzip.h"
#include "profile/pprof_reader.h"
#include "profile/pprof_writer.h"
#include "test_profiles.h"

namespace heaprec {
namespace {

using namespace ::heaprec::profile;

size_t CountOccurrences(const std::string& haystack, const std::string& needle) {
  size_t count = 0;
  for (size_t pos = haystack.find(needle); pos != std::string::npos;
       pos = haystack.find(needle, pos + 1)) {
    ++count;
  }
  return count;
}

TEST(RoundTripTest, GzipPreservesEveryField) {
  Profile p = test_support::MakeFullProfile();
  std::string bytes = EncodeProfile(p);
  ASSERT_GE(bytes.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(bytes[1]), 0x8b);
  EXPECT_EQ(ReadProfile(bytes), p);
}

TEST(RoundTripTest, RawPreservesEveryField) {
  Profile p = test_support::MakeFullProfile();
  EXPECT_EQ(ReadProfile(EncodeProfile(p, /*gzip=*/false)), p);
}

TEST(RoundTripTest, EmptyProfile) {
  Profile p;
  EXPECT_EQ(ReadProfile(EncodeProfile(p)), p);
  EXPECT_EQ(ReadProfile(EncodeProfile(p, false)), p);
}

TEST(RoundTripTest, StringsAreDeduplicated) {
  Profile p = test_support::MakeFullProfile();
  p.comments.push_back("inuse_space");  // also a sample type and the default sample type
  std::string raw = EncodeProfile(p, false);
  EXPECT_EQ(CountOccurrences(raw, "inuse_space"), 1u);
  EXPECT_EQ(CountOccurrences(raw, "bytes"), 1u);
  EXPECT_EQ(ReadProfile(raw), p);
}

TEST(RoundTripTest, ConcatenatedGzipMembersAreOneStream) {
  // gzip(1) and Go's reader accept concatenated members; so must we.
  Profile p = test_support::MakeFullProfile();
  std::string raw = EncodeProfile(p, false);
  size_t cut = raw.size() / 2;
  std::string two = internal::Gzip(raw.substr(0, cut)) + internal::Gzip(raw.substr(cut));
  EXPECT_EQ(ReadProfile(two), p);
}

// Read -> write -> read must give back what was read, and writing that again the same bytes:
// `heaprec symbolize` rewrites files it did not produce.
void ExpectLosslessRoundTrip(const Profile& p) {
  std::string raw = EncodeProfile(p, /*gzip=*/false);
  Profile from_raw = ReadProfile(raw);
  EXPECT_EQ(from_raw, p);
  EXPECT_EQ(EncodeProfile(from_raw, false), raw);
  EXPECT_EQ(ReadProfile(EncodeProfile(p, /*gzip=*/true)), p);
}

// protozero drops a nested message that ends up empty; with default values omitted, these
// entries are empty messages and used to vanish from the output.
TEST(RoundTripTest, EmptySampleTypeSurvives) {
  Profile p;
  p.sample_types = {ValueType{}, {"inuse_space", "bytes"}, ValueType{}};
  p.samples = {{.values = {1, 2, 3}}, {.values = {0, 0, 0}}};
  ExpectLosslessRoundTrip(p);
  Profile full = test_support::MakeFullProfile();
  full.sample_types.insert(full.sample_types.begin(), ValueType{});
  for (Sample& s : full.samples) s.values.insert(s.values.begin(), 7);
  ExpectLosslessRoundTrip(full);
}

TEST(RoundTripTest, EmptyLabelSurvives) {
  Profile p = test_support::MakeFullProfile();
  p.samples[0].labels.insert(p.samples[0].labels.begin(), Label{});
  p.samples[1].labels = {Label{}, Label{}, {.key = "k", .str = "v"}, Label{}};
  ExpectLosslessRoundTrip(p);
}

TEST(RoundTripTest, EmptySampleSurvives) {
  Profile p;
  p.samples = {Sample{}, Sample{}, {.labels = {Label{}}}, Sample{}};
  ExpectLosslessRoundTrip(p);
  Profile full = test_support::MakeFullProfile();
  full.sample_types.clear();
  for (Sample& s : full.samples) s.values.clear();
  full.samples.push_back(Sample{});
  ExpectLosslessRoundTrip(full);
}

TEST(RoundTripTest, EmptyPeriodTypeAndDefaultsSurvive) {
  Profile p = test_support::MakeFullProfile();
  p.period_type = ValueType{};
  p.period = 0;
  p.comments = {"", "x", ""};
  p.locations[0].lines.push_back({.function_id = 1});  // line 0
  ExpectLosslessRoundTrip(p);
}

// The inputs with which pprof_reader_fuzzer found the bug (fuzz/crashes/pprof_reader_fuzzer/).
TEST(RoundTripTest, FuzzerReproducersRoundTrip) {
  const std::string inputs[] = {
      std::string("\x0a\x00\x32\x00", 4),                  // empty-sample-type-dropped
      std::string("\x0a\x00\x12\x02\x10\x05\x32\x00", 8),  // ...-unreadable-output
      std::string("\x12\x02\x1a\x00\x32\x00", 6),          // empty-label-dropped
  };
  for (const std::string& input : inputs) {
    Profile p = ReadProfile(input);
    ExpectLosslessRoundTrip(p);
  }
  Profile unreadable = ReadProfile(inputs[1]);
  ASSERT_EQ(unreadable.sample_types.size(), 1u);
  EXPECT_EQ(unreadable.samples.at(0).values, std::vector<int64_t>{5});
  EXPECT_EQ(ReadProfile(inputs[2]).samples.at(0).labels, std::vector<Label>{Label{}});
}

}  // namespace
}  // namespace heaprec
