// The report and the diff on profiles of the Ruby front end (testing::MakeRubyProfile): frames
// without mappings or addresses named like symbolized native frames, only inuse_* sample types,
// per-object sampling (weight = period), and the `class` label shown as a breakdown.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "analysis/diff.h"
#include "render/format.h"
#include "render/utf8.h"
#include "render/diff.h"
#include "analysis/top_table.h"
#include "render/top_table.h"
#include "profile/pprof_reader.h"
#include "profile/pprof_writer.h"
#include "render/output_file.h"
#include "profile/sampling_error.h"
#include "report_test_util.h"
#include "test_profiles.h"

namespace heaprec::cli {
namespace {

using namespace ::heaprec::profile;  // NOLINT: tests name the model unqualified
using namespace ::heaprec::analysis;  // NOLINT
using namespace ::heaprec::render;  // NOLINT

constexpr int64_t kEvery = 100;

// Per-object variance of `objects` estimated objects of `size` bytes: N·(w-1)·s², w = kEvery.
double BytesVariance(int64_t objects, int64_t size) {
  return static_cast<double>(objects) * (kEvery - 1) * static_cast<double>(size * size);
}
// The samples of MakeRubyProfile(kEvery).
const double kVarA = BytesVariance(300, 40), kVarB = BytesVariance(200, 60),
             kVarC = BytesVariance(100, 1000), kVarD = BytesVariance(100, 40);

std::string Print(const Profile& p, ReportOptions options) {
  std::ostringstream out;
  PrintReport(p, options, out);
  return out.str();
}

TEST(RubyReportTest, FunctionsFilesLinesAndValues) {
  // Through the file format too: the writer and reader must keep mapping-less locations as they
  // are.
  std::string path = testing::MakeTempDir() + "/ruby.pb.gz";
  WriteProfileFile(testing::MakeRubyProfile(kEvery), path);
  Profile profile = ReadProfileFile(path);
  ASSERT_EQ(profile, testing::MakeRubyProfile(kEvery));

  Report r = ComputeReport(profile, "");
  EXPECT_EQ(r.sample_type.type, "inuse_space");
  EXPECT_TRUE(r.sampled);
  EXPECT_EQ(r.total, 128000);
  EXPECT_EQ(r.samples, 4u);
  ASSERT_EQ(r.rows.size(), 4u);
  struct Expected {
    const char* function;
    const char* file;
    int64_t line;  // no start lines: the smallest line of the function in the profile
    int64_t flat, cum;
  };
  const Expected expected[] = {
      {"<main>", "/app/app.rb", 5, 100000, 128000},
      {"block in Cache#fill", "/app/lib/cache.rb", 12, 16000, 16000},
      {"Cache#fill", "/app/lib/cache.rb", 11, 12000, 28000},
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

TEST(RubyReportTest, TextNamesFramesAndShowsClasses) {
  ReportOptions options;
  options.source = "ruby.pb.gz";
  std::string text = Print(testing::MakeRubyProfile(kEvery), options);
  double margin_block = 1.959963984540054 * std::sqrt(kVarA + kVarD);
  const std::string expected[] = {
      "File: ruby.pb.gz\n",
      "Sample index: inuse_space (bytes)\n",
      "Sampling: 1 in 100 objects\n",
      "Comments: heaprec " HEAPREC_VERSION " ruby front end: live objects, sample_every=100\n",
      "Showing top 4 of 4 functions (±: 95% interval)\n",
      "  <main> app.rb:5\n",
      "   15.6 KiB" + PadLeft("±" + FormatValue(std::llround(margin_block), "bytes"), 12) +
          "   12.5%",
      "  block in Cache#fill cache.rb:12\n",
      "  Cache#fill cache.rb:11\n",
      "  Integer#times\n",
      "\nShowing top 4 of 4 classes\n",
      "      value           ±       %  class\n",
      "   97.7 KiB",
      "  Hash\n",
      "   11.7 KiB",
      "   9.4%  Array\n",
      "   9.4%  String\n",
      "   3.9 KiB",
      "   3.1%  Symbol\n",
  };
  size_t pos = 0;
  for (const std::string& line : expected) {
    size_t found = text.find(line, pos);
    ASSERT_NE(found, std::string::npos) << "missing or out of order: " << line << "\nin:\n" << text;
    pos = found + 1;
  }
  EXPECT_EQ(text.find("Sampling interval"), std::string::npos) << text;
  EXPECT_EQ(text.find("0x"), std::string::npos) << "no addresses: " << text;

  // Exact (sample_every 1): no intervals.
  std::string exact = Print(testing::MakeRubyProfile(1), {});
  EXPECT_NE(exact.find("Sampling: every object (exact)\n"), std::string::npos) << exact;
  EXPECT_EQ(exact.find("±"), std::string::npos) << exact;
  EXPECT_NE(exact.find(" in 4 samples\n"), std::string::npos) << exact;

  // Native profiles have no class section.
  EXPECT_EQ(Print(testing::MakeReportProfile(), {}).find("classes"), std::string::npos);
}

TEST(RubyReportTest, JsonRowsAndClasses) {
  ReportOptions options;
  options.format = Format::kJson;
  options.top = 2;
  std::string json = Print(testing::MakeRubyProfile(kEvery), options);
  Interval hash = Confidence95(100000, kVarC);
  for (const std::string& expected : std::vector<std::string>{
           "\"period\": 100,\n  \"period_type\": {\n    \"type\": \"objects\",\n"
           "    \"unit\": \"count\"\n  }",
           "{\n      \"function\": \"<main>\",\n      \"file\": \"/app/app.rb\",\n"
           "      \"line\": 5,\n      \"address\": null,\n      \"mapping\": null,\n"
           "      \"flat\": 100000,",
           "\"function\": \"block in Cache#fill\",\n      \"file\": \"/app/lib/cache.rb\",\n"
           "      \"line\": 12,",
           "\"class_count\": 4,\n  \"classes\": [\n    {\n      \"class\": \"Hash\",\n"
           "      \"value\": 100000,\n      \"value_low\": " +
               std::to_string(static_cast<int64_t>(std::floor(hash.low))) +
               ",\n      \"value_high\": " +
               std::to_string(static_cast<int64_t>(std::ceil(hash.high))) +
               ",\n      \"percent\": 78.1",
           "},\n    {\n      \"class\": \"Array\",",
       }) {
    EXPECT_NE(json.find(expected), std::string::npos) << expected << "\n" << json;
  }
  EXPECT_EQ(json.find("\"class\": \"String\""), std::string::npos) << "top 2 only\n" << json;
  ReportOptions native;
  native.format = Format::kJson;
  EXPECT_EQ(Print(testing::MakeReportProfile(), native).find("\"classes\""), std::string::npos);
}

TEST(RubyReportTest, MissingAllocTypesAreAnUnknownIndexNotACrash) {
  try {
    ComputeReport(testing::MakeRubyProfile(kEvery), "alloc_space");
    FAIL() << "no error";
  } catch (const UnknownSampleIndexError& e) {
    EXPECT_STREQ(e.what(),
                 "unknown sample index 'alloc_space'; this profile has: inuse_objects, "
                 "inuse_space");
  }
}

// NEW has ten times as many Array objects at Cache#fill line 15 (B): +108000 bytes, well beyond
// the per-object noise; everything else is unchanged.
Profile GrownProfile() {
  Profile p = testing::MakeRubyProfile(kEvery);
  p.samples[1].values = {2000, 2000 * 60};
  return p;
}

TEST(RubyDiffTest, PerObjectNoiseAndRubyNames) {
  Diff d = ComputeDiff(testing::MakeRubyProfile(kEvery), GrownProfile(), "");
  ASSERT_TRUE(d.sampled);
  EXPECT_EQ(d.total.change(), 108000);
  ASSERT_EQ(d.by_flat.size(), 1u);
  const DiffFunction& fill = d.by_flat[0];
  EXPECT_EQ(fill.row.function, "Cache#fill");
  EXPECT_EQ(fill.row.file, "/app/lib/cache.rb");
  EXPECT_EQ(fill.row.line, 11);
  EXPECT_EQ(fill.flat.change(), 108000);
  ExpectVariance(fill.flat.base_variance, kVarB);
  ExpectVariance(fill.flat.next_variance, BytesVariance(2000, 60));
  EXPECT_NEAR(fill.flat.noise(), 1.959963984540054 * std::sqrt(kVarB + BytesVariance(2000, 60)),
              1e-6);
  EXPECT_EQ(fill.flat.significance(), Significance::kSignificant);
  ASSERT_EQ(d.stacks.size(), 1u);
  ASSERT_EQ(d.stacks[0].frames.size(), 2u);
  EXPECT_EQ(d.stacks[0].frames[0].Label(), "Cache#fill cache.rb:11");
  EXPECT_EQ(d.stacks[0].frames[1].Label(), "<main> app.rb:5");

  // A change inside the noise: one more sampled Hash (100 objects of 1000 B) against a variance
  // of 100·99·1000² per side.
  Profile noisy = testing::MakeRubyProfile(kEvery);
  noisy.samples[2].values = {200, 200000};
  Diff n = ComputeDiff(testing::MakeRubyProfile(kEvery), noisy, "");
  ASSERT_EQ(n.by_flat.size(), 1u);
  EXPECT_EQ(n.by_flat[0].row.function, "<main>");
  EXPECT_EQ(n.by_flat[0].flat.significance(), Significance::kNoise);

  DiffOptions options;
  options.base_source = "base.pb.gz";
  options.next_source = "new.pb.gz";
  std::ostringstream out;
  PrintDiff(testing::MakeRubyProfile(kEvery), GrownProfile(), options, out);
  std::string text = out.str();
  EXPECT_NE(text.find("Base: base.pb.gz (sampled 1 in 100 objects)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("New:  new.pb.gz (sampled 1 in 100 objects)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("* +105.5 KiB"), std::string::npos) << text;
  EXPECT_NE(text.find("Cache#fill cache.rb:11\n"), std::string::npos) << text;
}

TEST(RubyDiffTest, DiffProfileAndIncompatibleNativeProfile) {
  Profile diff = MakeDiffProfile(testing::MakeRubyProfile(kEvery), GrownProfile());
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

  EXPECT_THROW(ComputeDiff(testing::MakeReportProfile(), testing::MakeRubyProfile(kEvery), ""),
               IncompatibleProfilesError);
}

}  // namespace
}  // namespace heaprec::cli
