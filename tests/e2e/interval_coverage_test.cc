// The 95% intervals `heaprec report` prints must cover the truth about 95% of the time.
//
// Setup. wl_c_sites (COUNT 4096, CHURN 8192; per-site truth in expected_sites.h, pinned down by
// the exact-mode tests) runs kRuns = 40 times at a 64 KiB interval with seeds 1001..1040. For each
// of the 9 sites that keep memory live, `heaprec report --format json --top 0` gives the cum of the
// site_* function and its interval [cum_low, cum_high]; a trial succeeds when the site's true
// live bytes lie inside. (The two sites that free everything have truth 0 and nothing sampled
// live: their interval is [0, 0] and always covers, so they are not counted.)
//
// Independence. Different runs use different seeds; within a run, sites are disjoint sets of
// allocations, and the sampler is a Poisson process on the allocated bytes, so whether one
// allocation is sampled is independent of every other (src/core/sampler.h). The n = 9 x 40 = 360
// trials are therefore independent Bernoulli(c), c the coverage.
//
// Acceptance band. If the intervals are right, c ~ 0.95, and the observed coverage
// C = successes / n has standard deviation sigma = sqrt(0.95 x 0.05 / n) = 0.0115 for n = 360. We
// accept |C - 0.95| <= 4 sigma, i.e. C in [0.904, 0.996] (at least 326 and at most 358 of 360).
// The normal approximation of the binomial is good here (n·0.05 = 18), and a 4-sigma excursion
// has probability ~6e-5. The intervals are themselves normal approximations with an estimated
// variance, so their exact coverage is not 0.95: summing the binomial distribution of each
// site's sampled-object count (~31 to ~79 expected samples per site) gives 0.942 to 0.952, mean
// 0.948, well inside the band. What the band catches: intervals 20% too narrow (1.57 sigma) cover
// ~0.88 and fail; a third too narrow ~0.80; a variance in the wrong unit (objects instead of
// bytes) ~0; a biased estimator lowers the coverage. What 360 trials cannot catch: intervals up
// to ~40% too wide still cover < 0.996 (a third too wide: ~0.988); the unit tests
// (tests/analysis/report_test.cc, tests/profile/sampling_error_test.cc) pin the width itself.
//
// Reproducible: fixed seeds and a deterministic single-threaded workload give the same 360
// intervals on every run, so a pass stays a pass. ~40 x 0.4 s, run two at a time.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <map>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "e2e_test_base.h"
#include "expected_sites.h"

namespace heaprec::e2e {
namespace {

constexpr int kRuns = 40;
constexpr int kFirstSeed = 1001;
constexpr long kCount = 4096, kChurn = 8192;
constexpr double kNominal = 0.95;
constexpr double kSigmas = 4;

struct Bounds {
  int64_t cum = -1, low = -1, high = -1;
};

// The cum, cum_low and cum_high of each "site_*" row of `heaprec report --format json`: every row
// is a flat object, so its fields sit between its "function" and the next '}'.
std::map<std::string, Bounds> SiteRows(const std::string& json) {
  std::map<std::string, Bounds> rows;
  static const std::regex function("\"function\": \"(site_[a-z_]+)\"");
  static const std::regex cum(
      "\"cum\": (-?[0-9]+),\\s*\"cum_low\": (-?[0-9]+),\\s*"
      "\"cum_high\": (-?[0-9]+)");
  for (auto it = std::sregex_iterator(json.begin(), json.end(), function);
       it != std::sregex_iterator(); ++it) {
    size_t start = it->position(0);
    size_t end = json.find('}', start);
    std::string row = json.substr(start, end - start);
    std::smatch m;
    if (std::regex_search(row, m, cum)) {
      rows[(*it)[1]] = {std::stoll(m[1]), std::stoll(m[2]), std::stoll(m[3])};
    }
  }
  return rows;
}

class IntervalCoverageTest : public E2eTest {};

TEST_F(IntervalCoverageTest, NinetyFivePercentIntervalsCoverTheTruth) {
  std::vector<ExpectedSite> sites;
  for (ExpectedSite& site : CSites(kCount, kChurn)) {
    if (site.values.inuse_space > 0) sites.push_back(std::move(site));
  }
  ASSERT_EQ(sites.size(), 9u);

  std::vector<std::map<std::string, Bounds>> results(kRuns);
  std::vector<std::string> errors(kRuns);
  auto worker = [&](int first) {
    for (int i = first; i < kRuns; i += 2) {
      TempDir dir;
      RunResult r = HeaprecRun(
          dir.path(),
          {"--sample-interval", "64K", "--seed", std::to_string(kFirstSeed + i), "--top", "0"},
          {WL_C_SITES, std::to_string(kCount), std::to_string(kChurn)});
      std::vector<std::string> files = ListProfiles(dir.path());
      if (r.status != 0 || files.size() != 1) {
        errors[i] = "run " + std::to_string(i) + " failed: " + r.err;
        continue;
      }
      RunResult report = RunProgram(
          {HEAPREC_BIN, "report", "--format", "json", "--top", "0", files[0]}, dir.path());
      if (report.status != 0) {
        errors[i] = "report " + std::to_string(i) + " failed: " + report.err;
        continue;
      }
      results[i] = SiteRows(report.out);
    }
  };
  std::thread a(worker, 0), b(worker, 1);
  a.join();
  b.join();
  for (const std::string& e : errors) ASSERT_EQ(e, "");

  int trials = 0, covered = 0;
  std::map<std::string, int> misses;
  for (int i = 0; i < kRuns; ++i) {
    for (const ExpectedSite& site : sites) {
      auto it = results[i].find(site.name);
      ASSERT_NE(it, results[i].end()) << "run " << i << ": no row for " << site.name;
      const Bounds& b = it->second;
      ASSERT_LE(b.low, b.cum) << site.name;
      ASSERT_GE(b.high, b.cum) << site.name;
      ASSERT_GT(b.high, b.low) << site.name << ": a sampled site must have a nonzero interval";
      ++trials;
      if (b.low <= site.values.inuse_space && site.values.inuse_space <= b.high) {
        ++covered;
      } else {
        ++misses[site.name];
      }
    }
  }
  double coverage = static_cast<double>(covered) / trials;
  double sigma = std::sqrt(kNominal * (1 - kNominal) / trials);
  std::string by_site;
  for (const auto& [name, n] : misses) by_site += " " + name + "=" + std::to_string(n);
  EXPECT_NEAR(coverage, kNominal, kSigmas * sigma)
      << covered << " of " << trials << " intervals cover the truth; misses:" << by_site;
  RecordProperty("coverage", std::to_string(coverage));
  std::cerr << "interval coverage: " << covered << " of " << trials << " = " << coverage
            << " (accepted: " << kNominal << " +- " << kSigmas * sigma << "); misses:" << by_site
            << "\n";
}

}  // namespace
}  // namespace heaprec::e2e
