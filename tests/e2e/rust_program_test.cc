// A Rust program under heaprec, end to end: tests/workloads/wl_rust_sites.rs, built by the test
// build with the system's rustc, once with the legacy symbol mangling (rustc's default) and once
// with v0. heaprec sees Rust's allocations (its System allocator calls the C library's malloc,
// calloc and realloc), the report names the program's functions as Rust people read them, and
// places them in the program's source.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "e2e_test_base.h"
#include "expected_sites.h"

namespace heaprec::e2e {
namespace {

struct RustBuild {
  std::string mangling;  // "legacy" or "v0"
  std::string program;
};
void PrintTo(const RustBuild& build, std::ostream* out) { *out << build.mangling; }

// A site below the crate, in the legacy spelling ("Cache::get_or_load"), as the report shows it
// for the build: legacy names a method Crate::Type::method, v0 keeps that it is one of an inherent
// impl, <Crate::Type>::method (as rustc's own demangler prints it).
std::string SiteName(const RustBuild& build, const std::string& site) {
  size_t separator = site.rfind("::");
  if (build.mangling == "legacy" || separator == std::string::npos) {
    return "wl_rust_sites::" + site;
  }
  return "<wl_rust_sites::" + site.substr(0, separator) + ">" + site.substr(separator);
}

// The program's sites by their live bytes at exit, most first (the table in wl_rust_sites.rs).
const std::vector<std::string> kSitesByLiveBytes = {
    "load_value",         "new_session",        "format_entry",
    "RequestLog::record", "Cache::get_or_load", "Server::open_session",
};

// Where a site is in wl_rust_sites.rs: its function's first line, and its allocating line (the
// one marked "// site: NAME").
struct SourceLines {
  int function = 0;
  int allocation = 0;
};

SourceLines LinesOf(const std::string& site) {
  std::ifstream source(WL_RUST_SITES_SOURCE);
  const std::string function = "fn " + site.substr(site.rfind(':') + 1) + "(";
  SourceLines lines;
  lines.allocation = MarkedLine(WL_RUST_SITES_SOURCE, "// site: " + site);
  std::string text;
  for (int number = 1; number < lines.allocation && std::getline(source, text); ++number) {
    if (text.find(function) != std::string::npos) lines.function = number;
  }
  EXPECT_GT(lines.function, 0) << site << ": no `" << function << "` in " << WL_RUST_SITES_SOURCE;
  EXPECT_GT(lines.allocation, lines.function) << site << ": no marker in " << WL_RUST_SITES_SOURCE;
  return lines;
}

class RustProgramTest : public E2eTest, public ::testing::WithParamInterface<RustBuild> {
 protected:
  // The program under `heaprec run --sample-interval 1` (every allocation recorded), and
  // `heaprec report ARGS` of its profile.
  std::string Report(const std::vector<std::string>& args) {
    RunResult run = HeaprecRun(dir_.path(), {"--sample-interval", "1"}, {GetParam().program});
    EXPECT_EQ(run.status, 0) << run.err;
    std::vector<std::string> files = Profiles();
    EXPECT_EQ(files.size(), 1u) << run.err;
    if (files.empty()) return "";
    std::vector<std::string> argv = {HEAPREC_BIN, "report", files[0]};
    argv.insert(argv.end(), args.begin(), args.end());
    RunResult report = RunProgram(argv, dir_.path());
    EXPECT_EQ(report.status, 0) << report.err;
    return report.out;
  }

  std::string Name(const std::string& site) const { return SiteName(GetParam(), site); }
};

TEST_P(RustProgramTest, SitesHoldTheirKnownBytes) {
  RunResult run = Profiled({"--sample-interval", "1"}, {GetParam().program});
  EXPECT_EQ(run.out,
            "rust-sites requests=4000 cached=500 sessions=400 logged=4000 checksum=847968\n");
  Profile profile = OnlyProfile();
  for (const ExpectedSite& site :
       RustSites(4000, [this](const std::string& s) { return Name(s); })) {
    EXPECT_EQ(SiteValues(profile, site.name), site.values) << site.name;
  }
  // The cache's values, its keys (9 bytes: "user-0042") and its hash table of at least 1024
  // buckets of 48-byte (String, Vec<u8>) entries, which hashbrown sizes as it likes beyond that.
  Values cache = SiteValues(profile, Name("Cache::get_or_load"));
  EXPECT_EQ(cache.inuse_objects, 500 + 500 + 1) << cache;
  EXPECT_GE(cache.inuse_space, 500 * 4096 + 500 * 9 + 1024 * 48) << cache;

  // The build has the mangling it is named for: the program's functions' linker names.
  const std::regex mangled(GetParam().mangling == "legacy" ? "_ZN13wl_rust_sites.*17h[0-9a-f]{16}E"
                                                           : "_R.*13wl_rust_sites.*");
  int program_functions = 0;
  for (const Function& function : profile.functions) {
    if (function.name.rfind(Name("load_value"), 0) != 0) continue;
    ++program_functions;
    EXPECT_TRUE(std::regex_match(function.system_name, mangled)) << function.system_name;
  }
  EXPECT_EQ(program_functions, 1);
}

TEST_P(RustProgramTest, ReportShowsRustNamesAndTheirLines) {
  const std::string report = Report({"--top", "0"});
  // Nothing mangled, no legacy hash (leak::main::h68d97aefc12db3cb), no v0 crate disambiguator
  // (alloc[fdfd2bd8633a6659]::alloc::alloc_zeroed).
  for (const char* pattern : {R"((^|[^A-Za-z0-9_])_R[A-Za-z0-9_]{4,})", "_ZN[0-9]",
                              "::h[0-9a-f]{16}", R"(\[[0-9a-f]{16}\])"}) {
    std::smatch match;
    EXPECT_FALSE(std::regex_search(report, match, std::regex(pattern)))
        << pattern << " matches '" << match.str() << "' in\n"
        << report;
  }
  std::vector<ReportRow> rows = ReportRows(report);
  for (const std::string& site : kSitesByLiveBytes) {
    const std::string name = Name(site);
    auto row = std::find_if(rows.begin(), rows.end(),
                            [&](const ReportRow& r) { return r.function == name; });
    ASSERT_NE(row, rows.end()) << name << " is not in\n" << report;
    // In the program's source, within the function: its first line, or its allocating line.
    SourceLines lines = LinesOf(site);
    EXPECT_EQ(row->file, "wl_rust_sites.rs") << name;
    EXPECT_GE(row->line, lines.function) << name;
    EXPECT_LE(row->line, lines.allocation) << name;
  }
}

// The report's first rows are the program's own sites, with their allocating lines, in the order
// of the bytes they hold: not Rust's allocator (alloc::alloc::alloc, __rust_alloc), its collections
// (alloc::raw_vec, hashbrown) or its runtime. Needs the allocation-site rule (issue 13, item 1).
TEST_P(RustProgramTest, KnownSitesHeadTheReport) {
  const std::string report = Report({});
  std::vector<std::string> expected, top;
  for (const std::string& site : kSitesByLiveBytes) {
    expected.push_back(Name(site) +
                       " wl_rust_sites.rs:" + std::to_string(LinesOf(site).allocation));
  }
  for (const ReportRow& row : ReportRows(report)) {
    if (top.size() == expected.size()) break;
    top.push_back(row.file.empty()
                      ? row.function
                      : row.function + " " + row.file + ":" + std::to_string(row.line));
  }
  EXPECT_EQ(top, expected) << report;
}

INSTANTIATE_TEST_SUITE_P(Mangling, RustProgramTest,
                         ::testing::Values(RustBuild{"legacy", WL_RUST_SITES_LEGACY},
                                           RustBuild{"v0", WL_RUST_SITES_V0}),
                         [](const ::testing::TestParamInfo<RustBuild>& info) {
                           return info.param.mangling;
                         });

}  // namespace
}  // namespace heaprec::e2e
