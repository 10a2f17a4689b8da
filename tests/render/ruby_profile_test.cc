// The report's and the diff's outputs on profiles of the Ruby front end
// (test_support::MakeRubyProfile): frames named like symbolized native frames, per-object sampling
// and its intervals, and the `class` label shown as a breakdown.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "analysis/diff.h"
#include "analysis/report.h"
#include "print_to_string.h"
#include "profile/sampling_error.h"
#include "render/diff.h"
#include "render/format.h"
#include "render/report.h"
#include "render/utf8.h"
#include "report_test_util.h"
#include "ruby_variances.h"
#include "test_profiles.h"

namespace heaprec::render {
namespace {

using namespace ::heaprec::profile;
using namespace ::heaprec::analysis;
using namespace ::heaprec::test_support::ruby;  // NOLINT: the Ruby profile's variances
using test_support::ExpectVariance;
using test_support::Print;

TEST(RubyReportTest, TextNamesFramesAndShowsClasses) {
  ReportOptions options;
  options.source = "ruby.pb.gz";
  std::string text = Print(test_support::MakeRubyProfile(kEvery), options);
  double margin_block = 1.959963984540054 * std::sqrt(kVarA + kVarD);
  const std::string expected[] = {
      "File: ruby.pb.gz\n",
      "Sample index: inuse_space (bytes)\n",
      "Sampling: 1 in 100 objects\n",
      "Comments: heaprec " HEAPREC_VERSION " ruby front end (objects) sample_every=100\n",
      // Integer#times, a C method that only calls, is context: not a row.
      "Showing top 3 of 3 functions (±: 95% interval)\n",
      "  <main> app.rb:7\n",
      "   15.6 KiB" + PadLeft("±" + FormatValue(std::llround(margin_block), "bytes"), 12) +
          "   12.5%",
      "  block in Cache#fill cache.rb:12\n",
      "  Cache#fill cache.rb:15\n",
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
  std::string exact = Print(test_support::MakeRubyProfile(1), {});
  EXPECT_NE(exact.find("Sampling: every object (exact)\n"), std::string::npos) << exact;
  EXPECT_EQ(exact.find("±"), std::string::npos) << exact;
  EXPECT_NE(exact.find(" in 4 profile records\n"), std::string::npos) << exact;

  // Native profiles have no class section.
  EXPECT_EQ(Print(test_support::MakeReportProfile(), {}).find("classes"), std::string::npos);
}

TEST(RubyReportTest, JsonRowsAndClasses) {
  ReportOptions options;
  options.format = Format::kJson;
  options.top = 2;
  std::string json = Print(test_support::MakeRubyProfile(kEvery), options);
  Interval hash = Confidence95(100000, kVarC);
  for (const std::string& expected : std::vector<std::string>{
           "\"period\": 100,\n  \"period_type\": {\n    \"type\": \"objects\",\n"
           "    \"unit\": \"count\"\n  }",
           "{\n      \"function\": \"<main>\",\n      \"file\": \"/app/app.rb\",\n"
           "      \"line\": 7,\n      \"address\": null,\n      \"mapping\": null,\n"
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
  EXPECT_EQ(Print(test_support::MakeReportProfile(), native).find("\"classes\""),
            std::string::npos);
}

TEST(RubyDiffTest, PerObjectNoiseAndRubyNames) {
  Diff d = ComputeDiff(test_support::MakeRubyProfile(kEvery), GrownProfile(), "");
  ASSERT_TRUE(d.sampled);
  EXPECT_EQ(d.total.change(), 108000);
  ASSERT_EQ(d.by_flat.size(), 1u);
  const DiffFunction& fill = d.by_flat[0];
  EXPECT_EQ(fill.row.function, "Cache#fill");
  EXPECT_EQ(fill.row.file, "/app/lib/cache.rb");
  EXPECT_EQ(fill.row.line, 15) << "the line of its flat";
  EXPECT_EQ(fill.flat.change(), 108000);
  ExpectVariance(fill.flat.base_variance, kVarB);
  ExpectVariance(fill.flat.next_variance, BytesVariance(2000, 60));
  EXPECT_NEAR(fill.flat.noise(), 1.959963984540054 * std::sqrt(kVarB + BytesVariance(2000, 60)),
              1e-6);
  EXPECT_EQ(fill.flat.significance(), Significance::kSignificant);
  ASSERT_EQ(d.stacks.size(), 1u);
  ASSERT_EQ(d.stacks[0].frames.size(), 2u);
  // Each frame with the line it is at in this stack.
  EXPECT_EQ(d.stacks[0].frames[0].Label(), "Cache#fill cache.rb:15");
  EXPECT_EQ(d.stacks[0].frames[1].Label(), "<main> app.rb:5");

  // A change inside the noise: one more sampled Hash (100 objects of 1000 B) against a variance
  // of 100·99·1000² per side.
  Profile noisy = test_support::MakeRubyProfile(kEvery);
  noisy.samples[2].values = {200, 200000};
  Diff n = ComputeDiff(test_support::MakeRubyProfile(kEvery), noisy, "");
  ASSERT_EQ(n.by_flat.size(), 1u);
  EXPECT_EQ(n.by_flat[0].row.function, "<main>");
  EXPECT_EQ(n.by_flat[0].flat.significance(), Significance::kNoise);

  DiffOptions options;
  options.base_source = "base.pb.gz";
  options.next_source = "new.pb.gz";
  std::ostringstream out;
  PrintDiff(ComputeDiff(test_support::MakeRubyProfile(kEvery), GrownProfile(), ""), options, out);
  std::string text = out.str();
  EXPECT_NE(text.find("Base: base.pb.gz (sampled 1 in 100 objects)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("New:  new.pb.gz (sampled 1 in 100 objects)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("* +105.5 KiB"), std::string::npos) << text;
  EXPECT_NE(text.find("Cache#fill cache.rb:15\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace heaprec::render
