// The top table and the diff on profiles of the Ruby front end (test_support::MakeRubyProfile):
// frames without mappings or addresses named like symbolized native frames, only inuse_* sample
// types, per-object sampling (weight = period), the `class` label as a breakdown, and methods
// written in C charged to their Ruby callers.
#include <gtest/gtest.h>

#include "analysis/diff.h"
#include "analysis/report.h"
#include "profile/pprof_reader.h"
#include "report_test_util.h"
#include "ruby_variances.h"
#include "test_profiles.h"

namespace heaprec::analysis {
namespace {

using namespace ::heaprec::profile;
using namespace ::heaprec::test_support::ruby;  // NOLINT: the Ruby profile's variances
using test_support::ExpectVariance;
using test_support::Row;

TEST(RubyReportTest, FunctionsFilesLinesAndValues) {
  // Through the file format too: the writer and reader must keep mapping-less locations as they
  // are.
  std::string path = test_support::MakeTempDir() + "/ruby.pb.gz";
  test_support::WriteEncodedProfile(test_support::MakeRubyProfile(kEvery), path);
  Profile profile = ReadProfileFile(path);
  ASSERT_EQ(profile, test_support::MakeRubyProfile(kEvery));

  Report r = ComputeReport(profile, "");
  EXPECT_EQ(r.sample_type.type, "inuse_space");
  EXPECT_TRUE(r.sampled);
  EXPECT_EQ(r.total, 128000);
  EXPECT_EQ(r.samples, 4u);
  ASSERT_EQ(r.rows.size(), 4u);
  struct Expected {
    const char* function;
    const char* file;
    int64_t line;  // the line holding most of the flat (else of the cum)
    int64_t flat, cum;
  };
  const Expected expected[] = {
      {"<main>", "/app/app.rb", 7, 100000, 128000},
      {"block in Cache#fill", "/app/lib/cache.rb", 12, 16000, 16000},
      {"Cache#fill", "/app/lib/cache.rb", 15, 12000, 28000},
      {"Integer#times", "", 0, 0, 16000},
  };
  for (size_t i = 0; i < std::size(expected); ++i) {
    SCOPED_TRACE(expected[i].function);
    const ReportRow& row = r.rows[i];
    EXPECT_EQ(row.function, expected[i].function);
    EXPECT_EQ(row.file, expected[i].file);
    EXPECT_EQ(row.line, expected[i].line);
    EXPECT_EQ(row.address, "");
    EXPECT_EQ(row.mapping, "");
    EXPECT_EQ(row.flat, expected[i].flat);
    EXPECT_EQ(row.cum, expected[i].cum);
  }
  // Per-object variances: w = 100 whatever the size (the byte model would make the 1000 B Hash
  // objects weigh about 1 at a period of 100 and give <main> almost no variance).
  ExpectVariance(Row(r, "<main>").flat_variance, kVarC);
  ExpectVariance(Row(r, "<main>").cum_variance, kVarA + kVarB + kVarC + kVarD);
  ExpectVariance(Row(r, "block in Cache#fill").flat_variance, kVarA + kVarD);
  ExpectVariance(Row(r, "Cache#fill").cum_variance, kVarA + kVarB + kVarD);
  ExpectVariance(r.total_variance, kVarA + kVarB + kVarC + kVarD);

  Report objects = ComputeReport(profile, "inuse_objects");
  EXPECT_EQ(objects.total, 700);
  ExpectVariance(objects.total_variance, 700.0 * (kEvery - 1));
  ExpectVariance(Row(objects, "Integer#times").cum_variance, 400.0 * (kEvery - 1));
  // Without `bytes` labels, a count's variance is still known (it does not depend on the size).
  for (Sample& s : profile.samples) s.labels.erase(s.labels.begin());
  ExpectVariance(ComputeReport(profile, "inuse_objects").total_variance, 700.0 * (kEvery - 1));
}

// A method written in C (no file) that allocates, Array#push here, is not the site: its Ruby
// caller is, at the line that called it.
TEST(RubyReportTest, CMethodLeafChargesItsRubyCaller) {
  Profile p = test_support::MakeRubyProfile(kEvery);
  p.functions.push_back({.id = 5, .name = "Array#push", .system_name = "Array#push"});
  p.locations.push_back({.id = 7, .lines = {{5, 0}}});
  p.locations.push_back({.id = 8, .lines = {{2, 18}}});  // Cache#fill cache.rb:18
  // Array#push < Cache#fill cache.rb:18 < <main> app.rb:5: 5 objects of 80 B.
  p.samples.push_back({.location_ids = {7, 8, 4},
                       .values = {5 * kEvery, 5 * kEvery * 80},
                       .labels = {{.key = "bytes", .num = 80, .num_unit = "bytes"},
                                  {.key = "class", .str = "Array"}}});
  Report r = ComputeReport(p, "inuse_space");
  EXPECT_EQ(r.total, 128000 + 40000);
  const ReportRow& fill = Row(r, "Cache#fill");
  EXPECT_EQ(fill.flat, 12000 + 40000);
  EXPECT_EQ(fill.line, 18) << "the line that holds most of its flat";
  EXPECT_EQ(fill.Label(), "Cache#fill cache.rb:18");
  for (const ReportRow& row : r.rows) EXPECT_NE(row.function, "Array#push");
  // Integer#times only calls: in the rows (the stacks go through it), but as context.
  EXPECT_TRUE(Row(r, "Integer#times").context);
  EXPECT_FALSE(Row(r, "<main>").context) << "<main> allocates itself (app.rb:7)";

  // --all-frames: the C method is its own site again.
  Report all = ComputeReport(p, "inuse_space", false, {.sites = SiteRule::WithoutDefaults()});
  EXPECT_EQ(Row(all, "Array#push").flat, 40000);
  EXPECT_EQ(Row(all, "Cache#fill").flat, 12000);
  EXPECT_EQ(Row(all, "Cache#fill").line, 15);
  EXPECT_FALSE(Row(all, "Integer#times").context);
}

TEST(RubyReportTest, MissingAllocTypesAreAnUnknownIndexNotACrash) {
  try {
    ComputeReport(test_support::MakeRubyProfile(kEvery), "alloc_space");
    FAIL() << "no error";
  } catch (const UnknownSampleIndexError& e) {
    EXPECT_STREQ(e.what(),
                 "unknown sample index 'alloc_space'; this profile has: inuse_objects, "
                 "inuse_space");
  }
}

TEST(RubyDiffTest, DiffProfileAndIncompatibleNativeProfile) {
  Profile diff = MakeDiffProfile(test_support::MakeRubyProfile(kEvery), GrownProfile());
  EXPECT_EQ(diff.period_type, (ValueType{"objects", "count"}));
  EXPECT_TRUE(diff.mappings.empty());
  for (const Location& location : diff.locations) {
    EXPECT_EQ(location.mapping_id, 0u);
    EXPECT_EQ(location.address, 0u);
    EXPECT_EQ(location.lines.size(), 1u);
  }
  Report r = ComputeReport(diff, "inuse_space");
  EXPECT_EQ(r.total, 108000);
  EXPECT_EQ(Row(r, "Cache#fill").flat, 108000);
  // The negated base samples keep their labels, so their classes cancel out.
  ASSERT_EQ(r.classes.size(), 1u);
  EXPECT_EQ(r.classes[0].name, "Array");
  EXPECT_EQ(r.classes[0].value, 108000);

  EXPECT_THROW(
      ComputeDiff(test_support::MakeReportProfile(), test_support::MakeRubyProfile(kEvery), ""),
      IncompatibleProfilesError);
}

}  // namespace
}  // namespace heaprec::analysis
