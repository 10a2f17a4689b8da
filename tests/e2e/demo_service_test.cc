// The demo that scripts/demo.sh profiles (demo/service.cc), run the way it runs it: `heaprec run`
// at the default sampling interval, with the program's default arguments. Its story must hold:
// the final profile (at exit, after the service tore itself down) holds the shared_ptr cycle's
// sessions, first in the report at the line marked in the source, and neither the cache, the log
// nor the per-request temporaries; the peak profile has the cache on top; the temporaries, freed
// within their request, are most of the allocations but none of what is live.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "e2e_test_base.h"

namespace heaprec::e2e {
namespace {

const std::string kLeak = "(anonymous namespace)::SessionManager::Open";
const std::string kCache = "(anonymous namespace)::ResponseCache::Insert";
const std::string kLog = "(anonymous namespace)::RenderLog::Append";
const std::vector<std::string> kTemporaries = {
    "(anonymous namespace)::ReadRequest",
    "(anonymous namespace)::ParseHeaders",
    "(anonymous namespace)::RenderResponse",
    "(anonymous namespace)::RenderPage",
};

// The function rows of a sampled report (flat, ±, flat%, sum%, cum, ±, cum%, function FILE:LINE).
std::vector<ReportRow> SampledReportRows(const std::string& report) {
  static const std::regex row(
      R"(^ *[0-9.]+ [A-Za-z]+ +±[0-9.]+ [A-Za-z]+ +[0-9.]+% +[0-9.]+% +[0-9.]+ [A-Za-z]+ +)"
      R"(±[0-9.]+ [A-Za-z]+ +[0-9.]+% +(.+?)(?: ([^ ]+):([0-9]+))?$)");
  std::vector<ReportRow> rows;
  for (const std::string& text : Lines(report)) {
    std::smatch match;
    if (!std::regex_match(text, match, row)) continue;
    rows.push_back({match[1], match[2], match[3].matched ? std::stoi(match[3]) : 0});
  }
  return rows;
}

class DemoServiceTest : public E2eTest {};

TEST_F(DemoServiceTest, TheLeakIsWhatIsLiveAtExitAndTheCacheWhatPeaks) {
  // A fixed sampler seed: the sampled figures are the same on every run.
  RunResult run = HeaprecRun(dir_.path(), {"--seed", "27"}, {DEMO_SERVICE});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out.rfind("service: 600000 requests, ", 0), 0u) << run.out;

  // The report `heaprec run` prints: the final profile's, the leak on the first row at the line
  // of its allocation.
  const int leak_line = MarkedLine(DEMO_SERVICE_SOURCE, "// site: " + kLeak);
  ASSERT_GT(leak_line, 0);
  std::vector<ReportRow> rows = SampledReportRows(run.err);
  ASSERT_FALSE(rows.empty()) << run.err;
  EXPECT_EQ(rows[0].function, kLeak) << run.err;
  EXPECT_EQ(rows[0].file + ":" + std::to_string(rows[0].line),
            "service.cc:" + std::to_string(leak_line))
      << run.err;

  // The final profile: the sessions (~20 MiB: 999 of ~20 KiB) and nothing else of size.
  Profile final_profile = OnlyProfile();
  EXPECT_EQ(CommentText(final_profile, "reason"), "exit");
  const Values total = TotalValues(final_profile);
  const Values leak = SiteValues(final_profile, kLeak);
  EXPECT_GT(leak.inuse_space, 10 << 20) << leak;
  EXPECT_LT(leak.inuse_space, 40 << 20) << leak;
  EXPECT_GE(leak.inuse_space * 10, total.inuse_space * 9) << leak << " of " << total;
  EXPECT_EQ(SiteValues(final_profile, kCache).inuse_space, 0);
  EXPECT_EQ(SiteValues(final_profile, kLog).inuse_space, 0);
  int64_t temporaries_live = 0, temporaries_allocated = 0;
  for (const std::string& site : kTemporaries) {
    Values v = SiteValues(final_profile, site);
    temporaries_live += v.inuse_space;
    temporaries_allocated += v.alloc_objects;
  }
  EXPECT_LT(temporaries_live * 20, total.inuse_space) << temporaries_live << " of " << total;
  // ... though they are most of what was allocated.
  EXPECT_GT(temporaries_allocated * 2, total.alloc_objects)
      << temporaries_allocated << " of " << total;

  // The peak profile: the cache (48 MiB of pages) above the leak and the log.
  std::vector<std::string> peaks = PeakProfiles();
  ASSERT_EQ(peaks.size(), 1u);
  Profile peak = ReadProfileFile(peaks[0]);
  const int64_t cache_at_peak = SiteValues(peak, kCache).inuse_space;
  EXPECT_GT(cache_at_peak, 30 << 20);
  EXPECT_GT(cache_at_peak, SiteValues(peak, kLeak).inuse_space);
  EXPECT_GT(cache_at_peak, SiteValues(peak, kLog).inuse_space);
  EXPECT_GT(SiteValues(peak, kLog).inuse_space, 0);
}

}  // namespace
}  // namespace heaprec::e2e
