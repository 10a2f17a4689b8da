// The top report's text and JSON renderings (render/report.h): rows, units and ordering, the
// 95% intervals of sampled values and their aligned columns, exact mode, the frames that only lead
// to the sites left out, and the message of an unknown sample index.
#include "render/report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "analysis/report.h"
#include "interval_profile.h"
#include "print_to_string.h"
#include "profile/sampling_error.h"
#include "render/format.h"
#include "render/utf8.h"
#include "report_test_util.h"
#include "runtime_stack_profile.h"
#include "test_profiles.h"

namespace heaprec::render {
namespace {

using namespace ::heaprec::profile;
using namespace ::heaprec::analysis;
using namespace ::heaprec::test_support::interval;  // NOLINT: the profile with known variances
using test_support::ExpectVariance;
using test_support::Print;
using test_support::Row;

TEST(ReportTest, TextRowsInOrderWithUnits) {
  ReportOptions options;
  options.source = "heap.pb.gz";
  std::string text = Print(test_support::MakeReportProfile(), options);
  const char* expected[] = {
      "File: heap.pb.gz\n",
      "Sample index: inuse_space (bytes)\n",
      // Sampled at 512 KiB: every value carries the half-width of its 95% interval. The samples
      // have no `bytes` label, so object sizes come from inuse_space / inuse_objects: 1 MiB,
      // 74898 B and 256 KiB (margins checked against the formula in IntervalProfile's tests).
      "Total: 5.0 MiB in 4 profile records (±2.0 MiB at 95%)\n",
      "Sampling interval: 512.0 KiB of space\n",
      "Comments: heaprec " HEAPREC_VERSION " sample_interval=524288\n",
      "Showing top 5 of 5 functions (±: 95% interval)\n",
      "       flat           ±   flat%    sum%        cum           ±    cum%  function\n",
      // Short names, and the line of the call that holds the most (not the function's first).
      "    3.0 MiB    ±1.3 MiB   60.0%   60.0%    3.0 MiB    ±1.3 MiB   60.0%  Alloc alloc.cc:41\n",
      "    1.0 MiB  ±794.0 KiB   20.0%   80.0%    4.0 MiB    ±1.6 MiB   80.0%  ns::Inner "
      "inner.h:31\n",
      "  512.0 KiB  ±881.0 KiB   10.0%   90.0%    5.0 MiB    ±2.0 MiB  100.0%  main main.cc:11\n",
      "  512.0 KiB  ±967.9 KiB   10.0%  100.0%  512.0 KiB  ±967.9 KiB   10.0%  0x1234 "
      "(libfoo.so)\n",
      "        0 B        ±0 B    0.0%  100.0%    4.0 MiB    ±1.6 MiB   80.0%  ns::Build "
      "build.cc:22\n",
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
  options.top = 2;
  std::string text = Print(test_support::MakeReportProfile(), options, "inuse_objects");
  EXPECT_NE(text.find("Total: 13 in 4 profile records"), std::string::npos) << text;
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
  std::string json = Print(test_support::MakeReportProfile(), options);
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
           "\"comments\": [\n    \"heaprec " HEAPREC_VERSION " sample_interval=524288\"\n  ]",
           "\"function_count\": 5",
       }) {
    EXPECT_NE(json.find(expected), std::string::npos) << expected << "\n" << json;
  }
  const char* first_row =
      "{\n      \"function\": \"Alloc\",\n      \"file\": \"/src/alloc.cc\",\n"
      "      \"line\": 41,\n      \"address\": null,\n      \"mapping\": null,\n"
      "      \"flat\": 3145728,\n      \"flat_low\": 1737445,\n      \"flat_high\": 4554011,\n"
      "      \"flat_percent\": 60.00,\n      \"sum_percent\": 60.00,\n"
      "      \"cum\": 3145728,\n      \"cum_low\": 1737445,\n      \"cum_high\": 4554011,\n"
      "      \"cum_percent\": 60.00\n    }";
  EXPECT_NE(json.find(first_row), std::string::npos) << json;
  EXPECT_NE(json.find("\"address\": \"0x1234\",\n      \"mapping\": \"libfoo.so\""),
            std::string::npos)
      << json;
  EXPECT_LT(json.find("\"Alloc\""), json.find("\"ns::Inner\""));
  EXPECT_LT(json.find("\"ns::Inner\""), json.find("\"main\""));
  EXPECT_LT(json.find("\"main\""), json.find("\"ns::Build\""));
  EXPECT_EQ(json.back(), '\n');
}

TEST(ReportTest, JsonParsesWithPython) {
  ReportOptions options;
  options.format = Format::kJson;
  Profile p = test_support::MakeReportProfile();
  p.functions[0].name = "weird \x01\xff\t name";  // control and invalid UTF-8 bytes
  std::string json = Print(p, options);
  std::string out;
  int status = test_support::ReadJsonWithPython(
      json, "print(len(d[\"rows\"]), d[\"rows\"][0][\"function\"], d[\"total\"])", &out);
  EXPECT_EQ(status, 0) << out;
  EXPECT_EQ(out, "5 Alloc 5242880\n");
}

TEST(ReportTest, UnknownSampleIndexListsKnownOnes) {
  try {
    ComputeReport(test_support::MakeReportProfile(), "cpu");
    FAIL() << "no error";
  } catch (const UnknownSampleIndexError& e) {
    EXPECT_STREQ(e.what(),
                 "unknown sample index 'cpu'; this profile has: alloc_objects, alloc_space, "
                 "inuse_objects, inuse_space");
  }
}

// main and the runtime's start-up frames hold everything and are no sites: the table leaves them
// out, in text and JSON, and from the function count; --all-frames shows every frame as recorded.
TEST(ReportTest, ContextRowsAreLeftOut) {
  const Profile p = test_support::runtime_stack::MakeRuntimeStackProfile();
  ReportOptions options;
  options.top = 0;
  std::string text = Print(p, options);
  EXPECT_NE(text.find("Showing top 2 of 2 functions\n"), std::string::npos) << text;
  // Exact: no intervals.
  const char* rows =
      "       flat   flat%    sum%        cum    cum%  function\n"
      "    6.0 MiB   92.3%   92.3%    6.0 MiB   92.3%  Store::Put store.cc:12\n"
      "  512.0 KiB    7.7%  100.0%  512.0 KiB    7.7%  malloc\n";
  EXPECT_NE(text.find(rows), std::string::npos) << text;
  for (const char* context : {"main", "_start", "__libc_start_call_main", "_IO_file_doallocate",
                              "operator new", "std::vector"}) {
    EXPECT_EQ(text.find(std::string("  ") + context), std::string::npos) << context << "\n" << text;
  }

  options.format = Format::kJson;
  std::string json = Print(p, options);
  EXPECT_NE(json.find("\"function_count\": 2"), std::string::npos) << json;
  EXPECT_NE(json.find("\"function\": \"Store::Put\",\n      \"file\": \"/src/store.cc\",\n"
                      "      \"line\": 12,"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"function\": \"malloc\""), std::string::npos) << json;
  EXPECT_EQ(json.find("\"function\": \"main\""), std::string::npos) << json;
  EXPECT_EQ(json.find("\"function\": \"_start\""), std::string::npos) << json;

  options.format = Format::kText;
  text = Print(p, options, "", {.sites = SiteRule::WithoutDefaults()});
  EXPECT_NE(text.find("Showing top 8 of 8 functions\n"), std::string::npos) << text;
  EXPECT_NE(text.find("    6.5 MiB  100.0%  100.0%    6.5 MiB  100.0%  malloc\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  main main.cc:30\n"), std::string::npos) << text;
}

TEST(ReportTest, EmptyProfile) {
  Profile p;
  p.sample_types = {{"inuse_space", "bytes"}};
  std::string text = Print(p, {});
  EXPECT_NE(text.find("Total: 0 B in 0 profile records"), std::string::npos) << text;
  EXPECT_NE(text.find("No allocation was recorded: the program allocated nothing"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("Showing top"), std::string::npos) << "no empty table\n" << text;
}

// Nothing sampled: how to get samples, in the profile's own sampling model, instead of a table.
TEST(ReportTest, NothingSampledSaysHowToGetSamples) {
  Profile native = test_support::MakeNativeHeapProfile(512 * 1024);
  native.samples.clear();
  std::string text = Print(native, {});
  EXPECT_NE(text.find("No allocation was sampled: heaprec picks about one allocation per 512.0 KiB "
                      "allocated"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("heaprec run --sample-interval 4K"), std::string::npos) << text;
  EXPECT_EQ(text.find("Showing top"), std::string::npos) << text;
  Profile ruby = test_support::MakeRubyProfile(1000);
  ruby.samples.clear();
  text = Print(ruby, {});
  EXPECT_NE(text.find("No object was sampled (1 in 1000 objects)"), std::string::npos) << text;
  EXPECT_NE(text.find("--sample-every 10"), std::string::npos) << text;
}

// A profile of an attached process says, before its comments, what it does not cover: loaded by
// heaprec attach, what the heap held then and by block size; started dormant, that allocations
// before the (latest) attach and while detached are not in it.
TEST(ReportTest, AnAttachedProcessesProfileSaysWhatItDoesNotCover) {
  Profile injected = test_support::MakeNativeHeapProfile(512 * 1024);
  injected.comments.push_back(
      "attached=1 attached_at=1796655779 injected=1 held_at_attach=329194720 "
      "rss_at_attach=339615744 heap_in_use=333974672 unattributed=328150622 held_walked=329061760 "
      "held_by_size=11:321671280:300049,22:2605056:1");
  std::string text = Print(injected, {});
  EXPECT_NE(text.find("\nAttached: 2026-12-07 15:02:59 UTC, when the heap held 313.9 MiB "
                      "(allocated before, not in this profile); of the heap's 318.5 MiB now, "
                      "312.9 MiB is not accounted for by samples since\nBefore the attach, by "
                      "block size (glibc's heap as read then, 313.8 MiB in use): 306.8 MiB in 1-2 "
                      "KiB blocks (98%, 300049 blocks), 2.5 MiB in 2-4 MiB blocks (1%, 1 "
                      "block)\nComments: "),
            std::string::npos)
      << text;

  // Over another allocator the library leaves glibc's counts out: the heap then is not known.
  Profile other = test_support::MakeNativeHeapProfile(512 * 1024);
  other.comments.push_back("attached=1 attached_at=1796655779 injected=1 rss_at_attach=339615744");
  text = Print(other, {});
  EXPECT_NE(text.find("\nAttached: 2026-12-07 15:02:59 UTC; what the heap held then (allocated "
                      "before, not in this profile) is not known: the program's malloc is not "
                      "glibc's\nComments: "),
            std::string::npos)
      << text;

  Profile dormant = test_support::MakeNativeHeapProfile(512 * 1024);
  dormant.comments.push_back("attached=3 attached_at=1796655779");
  text = Print(dormant, {});
  EXPECT_NE(text.find("\nAttached: 2026-12-07 15:02:59 UTC (the latest of 3); allocations "
                      "before the attach and while detached are not in this profile\n"),
            std::string::npos)
      << text;

  EXPECT_EQ(Print(test_support::MakeNativeHeapProfile(512 * 1024), {}).find("Attached"),
            std::string::npos);
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
  EXPECT_NE(text.find("Total: 3.1 MiB in 4 profile records (±? at 95%)"), std::string::npos)
      << text;
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
  EXPECT_NE(text.find("Total: 3.1 MiB in 4 profile records\n"), std::string::npos) << text;
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

}  // namespace
}  // namespace heaprec::render
