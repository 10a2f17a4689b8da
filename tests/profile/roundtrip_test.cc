// Encode -> decode round trips of the pprof model, gzipped and raw.
#include <gtest/gtest.h>

#include <protozero/pbf_writer.hpp>

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

// What symbolization does to a profile's tables: a function with new strings, a line for a
// location, a mapping's flags, the same edit on both sides.
void Symbolize(Profile& p) {
  p.functions.push_back({.id = 900,
                         .name = "added()",
                         .system_name = "_Z5addedv",
                         .filename = "added.cc",
                         .start_line = 3});
  p.locations[0].lines.push_back({.function_id = 900, .line = 7});
  p.mappings[0].has_functions = p.mappings[0].has_line_numbers = true;
}

TEST(RewritableProfileTest, TablesRewrittenTheSamplesAsTheyWere) {
  const std::string raw = EncodeProfile(test_support::MakeFullProfile(), /*gzip=*/false);
  Profile full = ReadProfile(raw);
  RewritableProfile rewritable = ReadRewritableProfile(EncodeProfile(full));
  EXPECT_TRUE(rewritable.tables.samples.empty());
  Profile tables = full;
  tables.samples.clear();
  EXPECT_EQ(rewritable.tables, tables);
  // The samples' fields, byte for byte as the file had them.
  ASSERT_FALSE(rewritable.encoded_samples.empty());
  EXPECT_NE(raw.find(rewritable.encoded_samples), std::string::npos);

  Symbolize(full);
  Symbolize(rewritable.tables);
  const std::string rewritten = EncodeProfile(rewritable, /*gzip=*/false);
  EXPECT_EQ(ReadProfile(rewritten), full);
  EXPECT_NE(rewritten.find(rewritable.encoded_samples), std::string::npos);
  EXPECT_EQ(ReadProfile(EncodeProfile(rewritable)), full);  // gzipped
}

// A string table may hold a string twice (pprof's own writer does not, other writers may); a
// sample's label that names the second copy still names it after the rewrite, whose table keeps
// every entry at its index.
TEST(RewritableProfileTest, DuplicateStringsKeepTheirIndexes) {
  std::string raw;
  {
    protozero::pbf_writer w(raw);
    {
      protozero::pbf_writer type(w, 1);  // sample_type: "objects" "count"
      type.add_int64(1, 4);
      type.add_int64(2, 5);
    }
    {
      protozero::pbf_writer sample(w, 2);
      sample.add_int64(2, 7);  // one value
      protozero::pbf_writer label(sample, 3);
      label.add_int64(1, 3);  // key: the second "key"
      label.add_int64(2, 2);  // str: "value"
    }
    for (const char* s : {"", "key", "value", "key", "objects", "count"}) w.add_string(6, s);
  }
  const Profile full = ReadProfile(raw);
  ASSERT_EQ(full.samples.size(), 1u);
  EXPECT_EQ(full.samples[0].labels, (std::vector<Label>{{.key = "key", .str = "value"}}));
  const RewritableProfile rewritable = ReadRewritableProfile(raw);
  EXPECT_EQ(rewritable.strings.size(), 6u);
  EXPECT_EQ(ReadProfile(EncodeProfile(rewritable)), full);
}

}  // namespace
}  // namespace heaprec
