// The top report: aggregation (flat/cum, inlined frames, recursion, unsymbolized addresses),
// units, ordering, the 95% intervals of sampled values, and the text and JSON renderings.
#include "analysis/top_table.h"
#include "render/format.h"
#include "render/utf8.h"
#include "render/top_table.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "profile/sampling_error.h"
#include "report_test_util.h"
#include "test_profiles.h"

namespace heaprec::cli {
namespace {

using namespace ::heaprec::profile;  // NOLINT: tests name the model unqualified
using namespace ::heaprec::analysis;  // NOLINT
using namespace ::heaprec::render;  // NOLINT

std::string Print(const Profile& p, ReportOptions options) {
  std::ostringstream out;
  PrintReport(p, options, out);
  return out.str();
}

TEST(ReportTest, FlatAndCumPerFunction) {
  Report r = ComputeReport(testing::MakeReportProfile(), "inuse_space");
  constexpr int64_t kKiB = 1024, kMiB = 1024 * 1024;
  EXPECT_EQ(r.total, 5 * kMiB);
  EXPECT_EQ(r.samples, 4u);
  ASSERT_EQ(r.rows.size(), 5u);
  // Flat goes to the innermost frame of the leaf location only; cum counts each function once
  // per sample, even when it recurses.
  EXPECT_EQ(r.rows[0].function, "Alloc");
  EXPECT_EQ(r.rows[0].flat, 3 * kMiB);
  EXPECT_EQ(r.rows[0].cum, 3 * kMiB);
  EXPECT_EQ(r.rows[1].function, "ns::Inner()");
  EXPECT_EQ(r.rows[1].flat, 1 * kMiB);
  EXPECT_EQ(r.rows[1].cum, 4 * kMiB);
  EXPECT_EQ(r.rows[2].function, "main");
  EXPECT_EQ(r.rows[2].flat, 512 * kKiB);
  EXPECT_EQ(r.rows[2].cum, 5 * kMiB);
  EXPECT_EQ(r.rows[3].function, "0x1234");
  EXPECT_EQ(r.rows[3].mapping, "libfoo.so");
  EXPECT_EQ(r.rows[3].flat, 512 * kKiB);
  EXPECT_EQ(r.rows[4].function, "ns::Build(int)");
  EXPECT_EQ(r.rows[4].flat, 0);
  EXPECT_EQ(r.rows[4].cum, 4 * kMiB);
}

TEST(ReportTest, DefaultSampleIndexIsTheProfiles) {
  Profile p = testing::MakeReportProfile();
  EXPECT_EQ(ComputeReport(p, "").sample_type.type, "inuse_space");
  p.default_sample_type = "";
  p.sample_types.push_back({"custom", "count"});
  for (Sample& s : p.samples) s.values.push_back(1);
  EXPECT_EQ(ComputeReport(p, "").sample_type.type, "custom");  // pprof's rule: the last one
}

TEST(ReportTest, TextRowsInOrderWithUnits) {
  ReportOptions options;
  options.source = "heap.pb.gz";
  std::string text = Print(testing::MakeReportProfile(), options);
  const char* expected[] = {
      "File: heap.pb.gz\n",
      "Sample index: inuse_space (bytes)\n",
      // Sampled at 512 KiB: every value carries the half-width of its 95% interval. The samples
      // have no `bytes` label, so object sizes come from inuse_space / inuse_objects: 1 MiB,
      // 74898 B and 256 KiB (margins checked against the formula in IntervalProfile's tests).
      "Total: 5.0 MiB in 4 samples (±2.0 MiB at 95%)\n",
      "Sampling interval: 512.0 KiB of space\n",
      "Comments: heaprec " HEAPREC_VERSION " sample_interval=524288\n",
      "Showing top 5 of 5 functions (±: 95% interval)\n",
      "       flat           ±   flat%    sum%        cum           ±    cum%  function\n",
      "    3.0 MiB    ±1.3 MiB   60.0%   60.0%    3.0 MiB    ±1.3 MiB   60.0%  Alloc alloc.cc:40\n",
      "    1.0 MiB  ±794.0 KiB   20.0%   80.0%    4.0 MiB    ±1.6 MiB   80.0%  ns::Inner() "
      "inner.h:30\n",
      "  512.0 KiB  ±881.0 KiB   10.0%   90.0%    5.0 MiB    ±2.0 MiB  100.0%  main main.cc:10\n",
      "  512.0 KiB  ±967.9 KiB   10.0%  100.0%  512.0 KiB  ±967.9 KiB   10.0%  0x1234 "
      "(libfoo.so)\n",
      "        0 B        ±0 B    0.0%  100.0%    4.0 MiB    ±1.6 MiB   80.0%  ns::Build(int) "
      "build.cc:20\n",
  };
  size_t pos = 0;
  for (const char* line : expected) {
    size_t found = text.find(line, pos);
    ASSERT_NE(found, std::string::npos) << "missing or out of order: " << line << "in:\n" << text;
    pos = found + 1;
  }
}

TEST(ReportTest, CountsAreIntegersAndTopLimits) {
  ReportOptions options;
  options.sample_index = "inuse_objects";
  options.top = 2;
  std::string text = Print(testing::MakeReportProfile(), options);
  EXPECT_NE(text.find("Total: 13 in 4 samples"), std::string::npos) << text;
  EXPECT_NE(text.find("Showing top 2 of 5 functions"), std::string::npos) << text;
  // 7 objects of 74898 B at 512 KiB: w = 1/(1 - exp(-74899/524288)) = 7.51, margin
  // 1.96·sqrt(7·6.51) = 13.2.
  EXPECT_NE(
      text.find("         7         ±13   53.8%   53.8%          7         ±13   53.8%  0x1234 "
                "(libfoo.so)\n"),
      std::string::npos)
      << text;
  EXPECT_EQ(text.find("ns::Inner"), std::string::npos) << text;
}

TEST(ReportTest, JsonRows) {
  ReportOptions options;
  options.source = "dir/\"quoted\".pb.gz";
  options.format = Format::kJson;
  std::string json = Print(testing::MakeReportProfile(), options);
  for (const char* expected : {
           "\"file\": \"dir/\\\"quoted\\\".pb.gz\"",
           "\"sample_index\": \"inuse_space\"",
           "\"unit\": \"bytes\"",
           "\"confidence\": 0.95",
           "\"total\": 5242880",
           "\"total_low\": 3135633",
           "\"total_high\": 7350127",
           "\"samples\": 4",
           "\"period\": 524288",
           "\"comments\": [\n    \"heaprec " HEAPREC_VERSION
           "\",\n    \"sample_interval=524288\"\n  ]",
           "\"function_count\": 5",
       }) {
    EXPECT_NE(json.find(expected), std::string::npos) << expected << "\n" << json;
  }
  const char* first_row =
      "{\n      \"function\": \"Alloc\",\n      \"file\": \"/src/alloc.cc\",\n"
      "      \"line\": 40,\n      \"address\": null,\n      \"mapping\": null,\n"
      "      \"flat\": 3145728,\n      \"flat_low\": 1737445,\n      \"flat_high\": 4554011,\n"
      "      \"flat_percent\": 60.00,\n      \"sum_percent\": 60.00,\n"
      "      \"cum\": 3145728,\n      \"cum_low\": 1737445,\n      \"cum_high\": 4554011,\n"
      "      \"cum_percent\": 60.00\n    }";
  EXPECT_NE(json.find(first_row), std::string::npos) << json;
  EXPECT_NE(json.find("\"address\": \"0x1234\",\n      \"mapping\": \"libfoo.so\""),
            std::string::npos)
      << json;
  EXPECT_LT(json.find("\"Alloc\""), json.find("\"ns::Inner()\""));
  EXPECT_LT(json.find("\"ns::Inner()\""), json.find("\"main\""));
  EXPECT_LT(json.find("\"main\""), json.find("\"ns::Build(int)\""));
  EXPECT_EQ(json.back(), '\n');
}

TEST(ReportTest, JsonParsesWithPython) {
  ReportOptions options;
  options.format = Format::kJson;
  Profile p = testing::MakeReportProfile();
  p.functions[0].name = "weird \x01\xff\t name";  // control and invalid UTF-8 bytes
  std::string json = Print(p, options);
  std::string path = testing::MakeTempDir() + "/report.json";
  FILE* f = fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs(json.c_str(), f);
  fclose(f);
  std::string out;
  int status = testing::RunCommand(
      "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); "
      "print(len(d[\"rows\"]), d[\"rows\"][0][\"function\"], d[\"total\"])' " +
          testing::ShellQuote(path),
      &out);
  EXPECT_EQ(status, 0) << out;
  EXPECT_EQ(out, "5 Alloc 5242880\n");
}

TEST(ReportTest, UnknownSampleIndexListsKnownOnes) {
  try {
    ComputeReport(testing::MakeReportProfile(), "cpu");
    FAIL() << "no error";
  } catch (const UnknownSampleIndexError& e) {
    EXPECT_STREQ(e.what(),
                 "unknown sample index 'cpu'; this profile has: alloc_objects, alloc_space, "
                 "inuse_objects, inuse_space");
  }
  std::ostringstream out;
  ReportOptions options;
  options.sample_index = "cpu";
  EXPECT_THROW(PrintReport(testing::MakeReportProfile(), options, out), UnknownSampleIndexError);
  EXPECT_EQ(out.str(), "") << "nothing printed before the error";
}

TEST(ReportTest, EmptyProfile) {
  Profile p;
  p.sample_types = {{"inuse_space", "bytes"}};
  std::string text = Print(p, {});
  EXPECT_NE(text.find("Total: 0 B in 0 samples"), std::string::npos) << text;
  EXPECT_NE(text.find("Showing top 0 of 0 functions"), std::string::npos) << text;
}

// A hand-made sampled profile with known variances. Functions main (1), Build (2), Alloc (3), one
// location each; every sample has a `bytes` label. At T = 64 KiB:
//   A  Alloc <- Build <- main        650 objects of 1000 B
//   B  Build <- main                  80 objects of 4000 B
//   C  Alloc <- main <- main        2000 objects of 100 B (recursive: main counted once)
//   D  main                            2 objects of 1 MiB (p ~ 1: variance ~ 0)
constexpr int64_t kInterval = 64 * 1024;

struct Group {
  std::vector<uint64_t> stack;
  int64_t objects;
  int64_t size;
};
const Group kGroups[] = {
    {{3, 2, 1}, 650, 1000}, {{2, 1}, 80, 4000}, {{3, 1, 1}, 2000, 100}, {{1}, 2, 1 << 20}};

Profile IntervalProfile(int64_t period) {
  Profile p;
  p.sample_types = {{"inuse_objects", "count"}, {"inuse_space", "bytes"}};
  p.period_type = {"space", "bytes"};
  p.period = period;
  p.default_sample_type = "inuse_space";
  p.functions = {{.id = 1, .name = "main", .filename = "/src/main.cc", .start_line = 5},
                 {.id = 2, .name = "Build", .filename = "/src/build.cc", .start_line = 7},
                 {.id = 3, .name = "Alloc", .filename = "/src/alloc.cc", .start_line = 9}};
  p.locations = {{.id = 1, .address = 0x10, .lines = {{1, 6}}},
                 {.id = 2, .address = 0x20, .lines = {{2, 8}}},
                 {.id = 3, .address = 0x30, .lines = {{3, 10}}}};
  for (const Group& g : kGroups) {
    p.samples.push_back({.location_ids = g.stack,
                         .values = {g.objects, g.objects * g.size},
                         .labels = {{.key = "bytes", .num = g.size, .num_unit = "bytes"}}});
  }
  return p;
}

// Var of N objects of s bytes estimated at interval T, computed here from the model's first
// principles: each object is sampled with p = 1 - exp(-(s+1)/T) and counts s/p bytes, so
// Var = N·s²·(1-p)/p (true variance; the report's estimate n·s²(1-p)/p² equals it at n = N·p).
double BytesVariance(const Group& g, int64_t period) {
  double p = 1 - std::exp(-(static_cast<double>(g.size) + 1) / static_cast<double>(period));
  double s = static_cast<double>(g.size);
  return static_cast<double>(g.objects) * s * s * (1 - p) / p;
}

TEST(ReportIntervalTest, VariancesAddPerRowAndSampleCountsOnceInCum) {
  Report r = ComputeReport(IntervalProfile(kInterval), "inuse_space");
  ASSERT_TRUE(r.sampled);
  double a = BytesVariance(kGroups[0], kInterval), b = BytesVariance(kGroups[1], kInterval),
         c = BytesVariance(kGroups[2], kInterval), d = BytesVariance(kGroups[3], kInterval);
  // 1 MiB objects at 64 KiB are sampled with near certainty (1 - p = exp(-16)): sigma ~ 500 B.
  EXPECT_LT(std::sqrt(d), 1e-3 * (2 << 20));
  // Flat: the samples whose leaf is the function. Cum: the samples with it anywhere, each once.
  ExpectVariance(Row(r, "Alloc").flat_variance, a + c);
  ExpectVariance(Row(r, "Alloc").cum_variance, a + c);
  ExpectVariance(Row(r, "Build").flat_variance, b);
  ExpectVariance(Row(r, "Build").cum_variance, a + b);
  ExpectVariance(Row(r, "main").flat_variance, d);
  ExpectVariance(Row(r, "main").cum_variance, a + b + c + d);  // C not twice
  ExpectVariance(r.total_variance, a + b + c + d);
  EXPECT_EQ(Row(r, "main").cum, r.total);

  // inuse_objects: Var = N·(1-p)/p, no s².
  Report objects = ComputeReport(IntervalProfile(kInterval), "inuse_objects");
  double p = 1 - std::exp(-1001.0 / kInterval);
  ExpectVariance(
      Row(objects, "Build").cum_variance,
      650 * (1 - p) / p + 80 * std::exp(-4001.0 / kInterval) / (1 - std::exp(-4001.0 / kInterval)));
}

TEST(ReportIntervalTest, ConfidenceIsValuePlusMinus196Sigma) {
  Interval ci = Confidence95(1000, 100);
  EXPECT_NEAR(ci.low, 1000 - 19.6, 0.01);
  EXPECT_NEAR(ci.high, 1000 + 19.6, 0.01);
  EXPECT_EQ(Confidence95(10, 10000).low, 0) << "clamped at zero";
  // A negated value (a diff profile's base samples) has the variance of its magnitude.
  EXPECT_DOUBLE_EQ(ValueVariance("inuse_space", -650000, 1000, kInterval),
                   ValueVariance("inuse_space", 650000, 1000, kInterval));
  EXPECT_GT(ValueVariance("inuse_space", -650000, 1000, kInterval), 0);
}

TEST(ReportIntervalTest, ObjectSizeFallsBackToSpaceOverObjects) {
  Profile labelled = IntervalProfile(kInterval);
  Profile unlabelled = labelled;
  for (Sample& s : unlabelled.samples) s.labels.clear();
  Report a = ComputeReport(labelled, "inuse_space"), b = ComputeReport(unlabelled, "inuse_space");
  ExpectVariance(b.total_variance, a.total_variance);
  // Neither a label nor an objects value: the variance is unknown, and shown as such.
  Profile unknown = unlabelled;
  unknown.sample_types.erase(unknown.sample_types.begin());
  for (Sample& s : unknown.samples) s.values.erase(s.values.begin());
  Report r = ComputeReport(unknown, "inuse_space");
  EXPECT_TRUE(std::isnan(r.total_variance));
  std::string text = Print(unknown, {});
  EXPECT_NE(text.find("Total: 3.1 MiB in 4 samples (±? at 95%)"), std::string::npos) << text;
  ReportOptions json;
  json.format = Format::kJson;
  std::string out = Print(unknown, json);
  EXPECT_NE(out.find("\"total_low\": null,\n  \"total_high\": null"), std::string::npos) << out;
}

// Display columns of a UTF-8 string.
size_t Columns(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

TEST(ReportIntervalTest, TextColumnsStayAligned) {
  std::string text = Print(IntervalProfile(kInterval), {});
  std::istringstream lines(text);
  std::string line;
  size_t header_column = 0, rows = 0;
  while (std::getline(lines, line)) {
    if (line.find("  function") != std::string::npos && line.find("flat") != std::string::npos) {
      header_column = Columns(line.substr(0, line.find("function")));
      continue;
    }
    if (header_column == 0) continue;
    ++rows;
    size_t label = line.find("  ", line.rfind('%')) + 2;
    EXPECT_EQ(Columns(line.substr(0, label)), header_column) << line << "\n" << text;
    EXPECT_NE(line.find("±"), std::string::npos) << line;
  }
  EXPECT_EQ(rows, 3u) << text;
  // Alloc: 650 x 1000 + 2000 x 100 = 830.1 KiB; margin 1.96·sqrt(a + c).
  double margin = 1.959963984540054 * std::sqrt(BytesVariance(kGroups[0], kInterval) +
                                                BytesVariance(kGroups[2], kInterval));
  EXPECT_NE(
      text.find("  830.1 KiB  " + PadLeft("±" + FormatValue(std::llround(margin), "bytes"), 10)),
      std::string::npos)
      << margin << "\n"
      << text;
}

TEST(ReportIntervalTest, JsonCarriesIntervals) {
  ReportOptions options;
  options.format = Format::kJson;
  std::string json = Print(IntervalProfile(kInterval), options);
  Report r = ComputeReport(IntervalProfile(kInterval), "inuse_space");
  const ReportRow& build = Row(r, "Build");
  Interval flat = Confidence95(static_cast<double>(build.flat), build.flat_variance);
  Interval cum = Confidence95(static_cast<double>(build.cum), build.cum_variance);
  Interval total = Confidence95(static_cast<double>(r.total), r.total_variance);
  auto num = [](double v) { return std::to_string(static_cast<int64_t>(v)); };
  for (const std::string& expected : std::vector<std::string>{
           "\"confidence\": 0.95",
           "\"total_low\": " + num(std::floor(total.low)),
           "\"total_high\": " + num(std::ceil(total.high)),
           "\"flat\": 320000,\n      \"flat_low\": " + num(std::floor(flat.low)) +
               ",\n      \"flat_high\": " + num(std::ceil(flat.high)) + ",",
           "\"cum\": 970000,\n      \"cum_low\": " + num(std::floor(cum.low)) +
               ",\n      \"cum_high\": " + num(std::ceil(cum.high)) + ",",
       }) {
    EXPECT_NE(json.find(expected), std::string::npos) << expected << "\n" << json;
  }
}

TEST(ReportIntervalTest, ExactModeShowsNoIntervals) {
  Profile exact = IntervalProfile(1);
  Report r = ComputeReport(exact, "inuse_space");
  EXPECT_FALSE(r.sampled);
  EXPECT_EQ(r.total_variance, 0);
  for (const ReportRow& row : r.rows) EXPECT_EQ(row.cum_variance, 0) << row.function;
  std::string text = Print(exact, {});
  EXPECT_EQ(text.find("±"), std::string::npos) << text;
  EXPECT_NE(text.find("Total: 3.1 MiB in 4 samples\n"), std::string::npos) << text;
  EXPECT_NE(text.find("       flat   flat%    sum%        cum    cum%  function\n"),
            std::string::npos)
      << text;
  ReportOptions options;
  options.format = Format::kJson;
  std::string json = Print(exact, options);
  EXPECT_NE(json.find("\"confidence\": null"), std::string::npos) << json;
  EXPECT_NE(json.find("\"total_low\": null,\n  \"total_high\": null"), std::string::npos) << json;
  EXPECT_NE(json.find("\"flat_low\": null,\n      \"flat_high\": null"), std::string::npos) << json;
  EXPECT_NE(json.find("\"cum_low\": null,\n      \"cum_high\": null"), std::string::npos) << json;
  // A sample type heaprec does not sample has no interval either.
  Profile custom = IntervalProfile(kInterval);
  custom.sample_types[1].type = "custom";
  EXPECT_FALSE(ComputeReport(custom, "custom").sampled);
}

TEST(ReportIntervalTest, StacksByValue) {
  Report r = ComputeReport(IntervalProfile(kInterval), "inuse_space", /*with_stacks=*/true);
  ASSERT_EQ(r.stacks.size(), 4u);
  auto names = [&](const ReportStack& s) {
    std::string out;
    for (size_t f : s.frames) out += r.rows[f].function + ";";
    return out;
  };
  EXPECT_EQ(names(r.stacks[0]), "main;");  // 2 MiB
  EXPECT_EQ(r.stacks[0].value, 2 << 20);
  EXPECT_EQ(names(r.stacks[1]), "Alloc;Build;main;");
  EXPECT_EQ(r.stacks[1].value, 650000);
  ExpectVariance(r.stacks[1].variance, BytesVariance(kGroups[0], kInterval));
  EXPECT_EQ(names(r.stacks[2]), "Build;main;");
  EXPECT_EQ(names(r.stacks[3]), "Alloc;main;main;");
  EXPECT_TRUE(ComputeReport(IntervalProfile(kInterval), "inuse_space").stacks.empty());
}

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
}  // namespace heaprec::cli
