// `heaprec leaks` end to end: wl_leaks (one steady leak, one flat pool replaced one for one, one
// churning site) runs ~1.5 s under `heaprec run --dump-interval 0.1`, sampled at the default
// interval and exact; the leak must come first as the only suspect. The JSON, SVG and HTML outputs
// are parsed by check_output.py.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "e2e_util.h"

namespace heaprec::e2e {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr int64_t kLeakTotal = 30 * 4 * 256 * 1024;  // 30 rounds of 4 x 256 KiB

// One "site" line of check_output.py.
struct SiteLine {
  std::map<std::string, std::string> fields;
  const std::string& operator[](const std::string& key) const {
    static const std::string missing = "<missing>";
    auto it = fields.find(key);
    return it == fields.end() ? missing : it->second;
  }
  double Number(const std::string& key) const { return std::strtod((*this)[key].c_str(), nullptr); }
};

struct Checked {
  std::string summary;  // check_output.py's output
  std::vector<SiteLine> sites;
  std::map<std::string, std::string> series, svg, html;
};

std::map<std::string, std::string> Fields(const std::string& line) {
  std::map<std::string, std::string> fields;
  std::istringstream in(line);
  std::string word;
  in >> word;  // the line's kind
  while (in >> word) {
    size_t eq = word.find('=');
    if (eq != std::string::npos) fields[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return fields;
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

class LeaksE2eTest : public ::testing::Test {
 protected:
  // Runs wl_leaks under heaprec with `flags` (profiles in <dir>/profiles), then `heaprec leaks` on
  // that directory: text, and JSON + SVG + HTML, the latter parsed by check_output.py.
  void Run(const std::vector<std::string>& flags, const std::string& free_at_exit = "0") {
    profiles_ = dir_ / "profiles";
    std::filesystem::create_directories(profiles_);
    std::vector<std::string> all = {"--dump-interval", "0.1", "--seed", "7", "--top", "0"};
    all.insert(all.end(), flags.begin(), flags.end());
    RunResult run = HeaprecRun(profiles_, all, {WL_LEAKS, "30", "50", free_at_exit});
    ASSERT_EQ(run.status, 0) << run.err;
    ASSERT_EQ(run.out, "leaked 31457280 bytes in 30 rounds\n");
    for (const std::string& file : ListProfiles(profiles_)) {
      // `heaprec leaks` leaves the peak profile (NAME.peak.pb.gz) out of the series, and sets
      // the exit profile (NAME.pb.gz: PID, then no number) aside.
      bool numbered = std::regex_search(file, std::regex(R"(\.[0-9]+\.[0-9]{4}\.pb\.gz$)"));
      if (numbered) ++profile_count_;
    }
    // ~15 interval dumps; a loaded machine may delay some of them.
    ASSERT_GE(profile_count_, 5u) << run.err;

    text_ = RunProgram({HEAPREC_BIN, "leaks", profiles_}, dir_.path());
    ASSERT_EQ(text_.status, 0) << text_.err;

    svg_path_ = dir_ / "leaks.svg";
    std::string html = dir_ / "leaks.html", json = dir_ / "leaks.json";
    RunResult r = RunProgram({HEAPREC_BIN, "leaks", profiles_, "--format", "json", "--svg",
                              svg_path_, "--html", html, "--top", "5"},
                             dir_.path());
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    WriteFile(json, r.out);
    RunResult check = RunProgram(
        {"/usr/bin/env", "python3", HEAPREC_LEAKS_CHECK, json, svg_path_, html}, dir_.path());
    ASSERT_EQ(check.status, 0) << check.out << check.err << "\n" << r.out;
    checked_.summary = check.out;
    std::istringstream lines(check.out);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.rfind("site ", 0) == 0) checked_.sites.push_back({Fields(line)});
      if (line.rfind("series ", 0) == 0) checked_.series = Fields(line);
      if (line.rfind("svg ", 0) == 0) checked_.svg = Fields(line);
      if (line.rfind("html ", 0) == 0) checked_.html = Fields(line);
    }
  }

  std::optional<SiteLine> Site(const std::string& name) const {
    for (const SiteLine& s : checked_.sites) {
      if (s["name"] == name) return s;
    }
    return std::nullopt;
  }

  // What both modes must show.
  void ExpectTheLeakAlone() {
    const std::string& summary = checked_.summary;
    ASSERT_FALSE(checked_.sites.empty()) << summary;
    EXPECT_EQ(checked_.series["profiles"], std::to_string(profile_count_)) << summary;
    EXPECT_EQ(checked_.series["final"], "1") << "the exit profile, set aside\n" << summary;
    EXPECT_EQ(checked_.series["suspects"], "1") << summary;
    const SiteLine& first = checked_.sites[0];
    EXPECT_EQ(first["rank"], "1");
    EXPECT_EQ(first["name"], "site_leak") << summary;
    EXPECT_EQ(first["suspect"], "1") << summary;
    // 1 MiB per round of >= 50 ms: at most 20 MiB/s (less when the machine is slow), give or take
    // the sampling error (seeds 1-8 estimate 18-25 MiB/s).
    EXPECT_GT(first.Number("slope"), 2 * kMiB) << summary;
    EXPECT_LT(first.Number("slope"), 40 * kMiB) << summary;
    EXPECT_GT(first.Number("r2"), 0.8) << summary;
    EXPECT_GE(first.Number("t"), 3) << summary;
    EXPECT_GT(first.Number("growth"), 10 * kMiB) << summary;
    EXPECT_EQ(first["points"], std::to_string(profile_count_)) << summary;
    std::optional<SiteLine> pool = Site("site_pool");
    ASSERT_TRUE(pool.has_value()) << summary;
    EXPECT_EQ((*pool)["suspect"], "0") << summary;
    std::optional<SiteLine> churn = Site("site_churn");
    if (churn) {  // listed only if it held bytes at some dump
      EXPECT_EQ((*churn)["suspect"], "0") << summary;
    }
    // Ages (the preload library's age_ns label): the leak's first objects are as old as
    // the run (~1.5 s at the exit profile); the pool's are replaced after 4 rounds (~200 ms).
    ASSERT_NE(first["age"], "None") << summary;
    ASSERT_NE((*pool)["age"], "None") << summary;
    EXPECT_GT(first.Number("age"), 1.0) << summary;
    EXPECT_LT(pool->Number("age"), first.Number("age") / 2) << summary;

    // SVG: one panel per charted site (the top 5, or fewer) with its polyline, the suspect's
    // fitted line; HTML: the at exit column (the exit profile is set aside).
    size_t charted = std::min<size_t>(5, checked_.sites.size());
    EXPECT_EQ(checked_.svg["polylines"], std::to_string(charted)) << summary;
    EXPECT_EQ(checked_.svg["fits"], "1") << summary;
    EXPECT_EQ(checked_.svg["panels"], std::to_string(charted)) << summary;
    EXPECT_EQ(checked_.html["at_exit"], "1") << summary;
    EXPECT_EQ(checked_.html["svg"], "1") << summary;
    EXPECT_EQ(checked_.html["table"], "1") << summary;
    std::string svg = ReadFile(svg_path_);
    EXPECT_NE(svg.find("live bytes (MiB)"), std::string::npos);
    EXPECT_NE(svg.find("time since the first profile (s)"), std::string::npos);

    // Text: the leak on the first row, as the only suspect.
    const std::string& text = text_.out;
    EXPECT_NE(text.find("; 1 suspect among"), std::string::npos) << text;
    size_t row = text.find("\n   1  yes ");
    ASSERT_NE(row, std::string::npos) << text;
    size_t end = text.find('\n', row + 1);
    EXPECT_NE(text.substr(row, end - row).find("site_leak wl_leaks.c:"), std::string::npos) << text;
    EXPECT_EQ(text.find("\n   2  yes "), std::string::npos) << text;
  }

  TempDir dir_;
  std::string profiles_;
  std::string svg_path_;
  size_t profile_count_ = 0;
  RunResult text_;
  Checked checked_;
};

TEST_F(LeaksE2eTest, SampledAtTheDefaultInterval) {
  Run({});
  ExpectTheLeakAlone();
  // Sampled: the points carry 95% intervals, drawn as error bars.
  EXPECT_NE(checked_.svg["errorbars"], "0") << checked_.summary;
}

// An RAII program frees everything before it exits: its exit profile holds nothing. As a point of
// the series it would drop every site to 0 and hide the leak; set aside, it is what it is: what was
// still live at the end.
TEST_F(LeaksE2eTest, RaiiProgramsExitProfileIsNotAPointOfTheSeries) {
  Run({"--sample-interval", "1"}, /*free_at_exit=*/"1");
  ExpectTheLeakAlone();
  EXPECT_EQ(checked_.sites[0]["final"], "0") << checked_.summary;
  EXPECT_EQ((*Site("site_pool"))["final"], "0") << checked_.summary;
  EXPECT_NE(text_.out.find("at exit: live bytes in the final profile "), std::string::npos)
      << text_.out;
}

TEST_F(LeaksE2eTest, ExactAndByStack) {
  Run({"--sample-interval", "1"});
  ExpectTheLeakAlone();
  // Exact: the exit profile holds every leaked byte, and the pool exactly its 64 x 64 KiB.
  const SiteLine& first = checked_.sites[0];
  EXPECT_EQ(first["final"], std::to_string(kLeakTotal)) << checked_.summary;
  EXPECT_EQ((*Site("site_pool"))["final"], std::to_string(64 * 64 * 1024)) << checked_.summary;
  EXPECT_EQ(checked_.svg["errorbars"], "0") << checked_.summary;

  // The same profiles by whole stack (here to run the program only once): the leak's stack first.
  RunResult r =
      RunProgram({HEAPREC_BIN, "leaks", profiles_, "--by", "stack", "--top", "1"}, dir_.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("   1  yes "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("site_leak < main"), std::string::npos) << r.out;
  // An unknown pid, a missing directory: errors, not empty reports.
  RunResult none = RunProgram({HEAPREC_BIN, "leaks", profiles_, "--pid", "1"}, dir_.path());
  EXPECT_EQ(none.status, 1);
  EXPECT_NE(none.err.find("no profile of pid 1"), std::string::npos) << none.err;
  RunResult missing = RunProgram({HEAPREC_BIN, "leaks", dir_ / "nowhere"}, dir_.path());
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("no such file or directory"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace heaprec::e2e
