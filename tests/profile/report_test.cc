// The top report: aggregation (flat/cum, inlined frames, recursion, unsymbolized addresses),
// units, ordering, and the text and JSON renderings.
#include "cli/report.h"

#include <gtest/gtest.h>

#include <sstream>

#include "test_profiles.h"

namespace heaprec::cli {
namespace {

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
      "Total: 5.0 MiB in 4 samples\n",
      "Sampling interval: 512.0 KiB of space\n",
      "Comments: heaprec 0.1.0 sample_interval=524288\n",
      "Showing top 5 of 5 functions\n",
      "       flat   flat%    sum%        cum    cum%  function\n",
      "    3.0 MiB   60.0%   60.0%    3.0 MiB   60.0%  Alloc alloc.cc:40\n",
      "    1.0 MiB   20.0%   80.0%    4.0 MiB   80.0%  ns::Inner() inner.h:30\n",
      "  512.0 KiB   10.0%   90.0%    5.0 MiB  100.0%  main main.cc:10\n",
      "  512.0 KiB   10.0%  100.0%  512.0 KiB   10.0%  0x1234 (libfoo.so)\n",
      "        0 B    0.0%  100.0%    4.0 MiB   80.0%  ns::Build(int) build.cc:20\n",
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
  EXPECT_NE(text.find("         7   53.8%   53.8%          7   53.8%  0x1234 (libfoo.so)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("ns::Inner"), std::string::npos) << text;
}

TEST(ReportTest, JsonRows) {
  ReportOptions options;
  options.source = "dir/\"quoted\".pb.gz";
  options.format = ReportFormat::kJson;
  std::string json = Print(testing::MakeReportProfile(), options);
  for (const char* expected : {
           "\"file\": \"dir/\\\"quoted\\\".pb.gz\"",
           "\"sample_index\": \"inuse_space\"",
           "\"unit\": \"bytes\"",
           "\"total\": 5242880",
           "\"samples\": 4",
           "\"period\": 524288",
           "\"comments\": [\n    \"heaprec 0.1.0\",\n    \"sample_interval=524288\"\n  ]",
           "\"function_count\": 5",
       }) {
    EXPECT_NE(json.find(expected), std::string::npos) << expected << "\n" << json;
  }
  const char* first_row =
      "{\n      \"function\": \"Alloc\",\n      \"file\": \"/src/alloc.cc\",\n"
      "      \"line\": 40,\n      \"address\": null,\n      \"mapping\": null,\n"
      "      \"flat\": 3145728,\n      \"flat_percent\": 60.00,\n      \"sum_percent\": 60.00,\n"
      "      \"cum\": 3145728,\n      \"cum_percent\": 60.00\n    }";
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
  options.format = ReportFormat::kJson;
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
}

}  // namespace
}  // namespace heaprec::cli
