// A C++ program built as users build theirs (-O2 -g), whose allocations all go through the
// standard library (programs/user_sites.cc): heaprec's report must name the user's functions, in
// short, at the lines of their allocating calls, and not operator new, std::__new_allocator or
// basic_string; and pprof, reading the same profile's drop_frames, must agree. On a program whose
// sites reach the library through every shape of C++ name (programs/inlined_sites.cc: operator+,
// return types, inlined user code, lambdas, conversion operators), pprof -top's sites and heaprec
// report's are the same functions.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "e2e_test_base.h"

namespace heaprec::e2e {
namespace {

// The program's sites by the bytes they hold at exit, most first, as marked in its source.
const std::vector<std::string> kSitesByLiveBytes = {
    "thumbs::Cache::GetOrCreate",
    "(anonymous namespace)::Buffers::Add",
    "(anonymous namespace)::Describe",
    "(anonymous namespace)::RequestLog::Record",
};

class UserSitesTest : public E2eTest {
 protected:
  // The program under `heaprec run --sample-interval 1`; returns its one profile.
  std::string ProfileOfARun() {
    RunResult run = HeaprecRun(dir_.path(), {"--sample-interval", "1"}, {USER_SITES});
    EXPECT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(run.out, "cache 4000, log 40000, churned 6400\n");
    std::vector<std::string> files = Profiles();
    EXPECT_EQ(files.size(), 1u) << run.err;
    return files.empty() ? "" : files[0];
  }
};

TEST_F(UserSitesTest, KnownSitesHeadTheReportWithTheirCallLines) {
  const std::string profile = ProfileOfARun();
  RunResult report = RunProgram({HEAPREC_BIN, "report", profile}, dir_.path());
  ASSERT_EQ(report.status, 0) << report.err;
  std::vector<std::string> expected, top;
  for (const std::string& site : kSitesByLiveBytes) {
    int line = MarkedLine(USER_SITES_SOURCE, "// site: " + site);
    ASSERT_GT(line, 0) << site;
    expected.push_back(site + " user_sites.cc:" + std::to_string(line));
  }
  std::vector<ReportRow> rows = ReportRows(report.out);
  for (const ReportRow& row : rows) {
    if (top.size() < expected.size()) {
      top.push_back(row.function + " " + row.file + ":" + std::to_string(row.line));
    }
    // Short names, and none of the library's frames the allocations went through; nor the
    // start-up frames that only lead to the sites.
    std::string name = row.function;
    if (name.rfind("(anonymous namespace)", 0) == 0) name.erase(0, 21);
    EXPECT_EQ(name.find_first_of("(<"), std::string::npos) << row.function;
    for (const char* library : {"std::", "operator new", "__gnu_cxx", "_start", "__libc_"}) {
      EXPECT_EQ(row.function.find(library), std::string::npos) << row.function;
    }
  }
  EXPECT_EQ(top, expected) << report.out;

  // As recorded (--all-frames --full-names), the library's frames are the ones holding the bytes.
  RunResult raw =
      RunProgram({HEAPREC_BIN, "report", "--all-frames", "--full-names", profile}, dir_.path());
  ASSERT_EQ(raw.status, 0) << raw.err;
  ASSERT_FALSE(ReportRows(raw.out).empty()) << raw.out;
  EXPECT_EQ(ReportRows(raw.out)[0].function.rfind("std::", 0), 0u) << raw.out;
}

// pprof prunes the frames the profile's drop_frames names, from the root down to the first match:
// its top rows by flat are the same functions.
TEST_F(UserSitesTest, PprofShowsTheSameSites) {
  ASSERT_NE(std::string(HEAPREC_PPROF), "");
  const std::string profile = ProfileOfARun();
  RunResult pprof = RunProgram({HEAPREC_PPROF, "-top", "-nodecount=4", profile}, dir_.path());
  ASSERT_EQ(pprof.status, 0) << pprof.err;
  std::vector<std::string> lines = Lines(pprof.out);
  ASSERT_GE(lines.size(), 4u) << pprof.out;
  std::vector<std::string> rows(lines.end() - 4, lines.end());
  for (size_t i = 0; i < kSitesByLiveBytes.size(); ++i) {
    // pprof shows full names: "thumbs::Cache<int, std::...>::GetOrCreate(int const&)".
    const std::string& site = kSitesByLiveBytes[i];
    std::string last = site.substr(site.rfind("::") + 2);
    EXPECT_NE(rows[i].find("::" + last), std::string::npos) << site << "\n" << pprof.out;
  }
}

// The functions holding at least 2% of the profile's bytes as their own (flat), by their full
// names, from `heaprec report --full-names` or `pprof -top` (whose "(inline)" marks go).
std::set<std::string> HeavySites(const std::string& report, const std::regex& row) {
  std::set<std::string> sites;
  for (const std::string& line : Lines(report)) {
    std::smatch match;
    if (std::regex_match(line, match, row) && std::stod(match[1]) >= 2.0) sites.insert(match[2]);
  }
  return sites;
}

TEST_F(UserSitesTest, PprofAndHeaprecNameTheSameSitesForEveryShapeOfName) {
  ASSERT_NE(std::string(HEAPREC_PPROF), "");
  RunResult run = HeaprecRun(dir_.path(), {"--sample-interval", "1"}, {INLINED_SITES});
  ASSERT_EQ(run.status, 0) << run.err;
  std::vector<std::string> files = Profiles();
  ASSERT_EQ(files.size(), 1u) << run.err;

  RunResult report =
      RunProgram({HEAPREC_BIN, "report", "--full-names", "--top", "100", files[0]}, dir_.path());
  ASSERT_EQ(report.status, 0) << report.err;
  // "   2.3 MiB   13.1%   13.1%    2.3 MiB   13.1%  shop::Label(...) inlined_sites.cc:24"
  const std::regex heaprec_row(
      R"(^ *[0-9.]+ [A-Za-z]+ +([0-9.]+)% +[0-9.]+% +[0-9.]+ [A-Za-z]+ +[0-9.]+% +(.+?)(?: [^ ]+:[0-9]+)?$)");
  std::set<std::string> heaprec_sites = HeavySites(report.out, heaprec_row);

  RunResult pprof = RunProgram({HEAPREC_PPROF, "-top", files[0]}, dir_.path());
  ASSERT_EQ(pprof.status, 0) << pprof.err;
  // " 2157.12kB 12.02% 25.10%  2157.12kB 12.02%  shop::Label(...) (inline)"
  const std::regex pprof_row(
      R"(^ *[0-9.]+[kMG]?B +([0-9.]+)% +[0-9.]+% +[0-9.]+[kMG]?B +[0-9.]+% +(.+?)(?: \(inline\))?$)");
  std::set<std::string> pprof_sites = HeavySites(pprof.out, pprof_row);

  EXPECT_EQ(heaprec_sites, pprof_sites) << "heaprec:\n" << report.out << "pprof:\n" << pprof.out;
  // The program's own functions that call the library, as pprof and --full-names show them.
  for (const char* site :
       {"shop::Label(", "shop::Catalog::AddLabels(int)", "shop::Catalog::AddIds(int)",
        "shop::Catalog::Index(int)", "shop::Catalog::Name(int)", "shop::Catalog::Blobs(int)",
        "shop::Catalog::Hooks(int)",
        "std::__cxx11::basic_string<char, std::char_traits<char>, "
        "std::allocator<char> > shop::Render<int>(int const&)",
        "shop::Sku::operator std::__cxx11::basic_string<"}) {
    EXPECT_TRUE(std::any_of(heaprec_sites.begin(), heaprec_sites.end(),
                            [&](const std::string& name) { return name.starts_with(site); }))
        << site << "\n"
        << report.out;
  }
}

}  // namespace
}  // namespace heaprec::e2e
