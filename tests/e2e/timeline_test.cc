// The timeline every profile carries (schema::kTimelinePrefix) and the summary `heaprec run` ends
// with, on a program whose heap has a known story (wl_timed phases, 400 ms a phase): it grows to
// 32 MiB, holds, frees all but the 4 MiB it leaks, idles, then forks a child that allocates 1 MiB;
// temporaries all along. Sampled at 64 KiB with a fixed seed: the bounds are 5 sigma of the
// per-byte model (sampled_test.cc derives it), sigma = sqrt(interval * bytes) for blocks much
// smaller than the interval.
#include "analysis/timeline.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "analysis/profile_header.h"
#include "e2e_util.h"
#include "profile/pprof_reader.h"

namespace heaprec::e2e {
namespace {

constexpr double kInterval = 65536;
constexpr double kPhaseMs = 400;
constexpr double kCache = 32768.0 * 1024, kLeak = 4096.0 * 1024;

double Bound(double bytes) { return 5 * std::sqrt(kInterval * bytes) + 300 * 1024; }

analysis::Timeline TimelineOf(const std::string& path) {
  const std::optional<analysis::Timeline> timeline =
      analysis::HeaderOf(profile::ReadProfileFile(path)).timeline;
  EXPECT_TRUE(timeline.has_value()) << path;
  return timeline.value_or(analysis::Timeline{});
}

class TimelineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    run_ = new RunResult(
        HeaprecRun(dir_->path(), {"--sample-interval", "65536", "--seed", "7"},
                   {WL_TIMED, "phases", "400", "fork"},
                   {{"LANG", "C.UTF-8"}, {"LC_ALL", std::nullopt}, {"LC_CTYPE", std::nullopt}}));
  }
  static void TearDownTestSuite() {
    delete run_;
    delete dir_;
  }
  // The parent's final profile, and its child's.
  static std::string Final(bool child) {
    for (const std::string& path : ListProfiles(dir_->path())) {
      const Profile p = profile::ReadProfileFile(path);
      const bool is_child = CommentText(p, "reason") == "_exit";
      if (is_child == child) return path;
    }
    ADD_FAILURE() << "no " << (child ? "child's" : "parent's") << " profile\n" << run_->err;
    return "";
  }
  static TempDir* dir_;
  static RunResult* run_;
};
TempDir* TimelineTest::dir_ = nullptr;
RunResult* TimelineTest::run_ = nullptr;

TEST_F(TimelineTest, PointsAreSpacedAndFollowTheHeap) {
  ASSERT_EQ(run_->status, 0) << run_->err;
  ASSERT_EQ(run_->out, "phases\n");
  const analysis::Timeline t = TimelineOf(Final(false));
  ASSERT_GE(t.points.size(), 8u);
  EXPECT_EQ(t.interval, 65536u);
  // At least 100 ms apart but for the last, which the profile adds for the moment it was written.
  for (size_t i = 1; i + 1 < t.points.size(); ++i) {
    EXPECT_GE(t.points[i].t_ms - t.points[i - 1].t_ms, 100u) << i;
  }
  EXPECT_GE(t.duration_ms(), 3 * kPhaseMs);
  // The peak: all 32 MiB, reached at the end of the growth, held until the free.
  EXPECT_NEAR(static_cast<double>(t.peak), kCache, Bound(kCache));
  EXPECT_GE(t.peak_ms, kPhaseMs * 0.75);
  EXPECT_LE(t.peak_ms, 2 * kPhaseMs + 200);
  // At the end the leak alone, and the resident set and allocated bytes known.
  const analysis::TimelinePoint& last = t.points.back();
  EXPECT_NEAR(static_cast<double>(last.live), kLeak, Bound(kLeak));
  EXPECT_GT(last.rss, static_cast<uint64_t>(kLeak));
  // The last point and the profile's comments share one reading of the resident set.
  EXPECT_EQ(static_cast<int64_t>(last.rss),
            CommentValue(profile::ReadProfileFile(Final(false)), "rss"));
  EXPECT_GT(static_cast<double>(last.allocated), kCache - Bound(kCache));
  // In the middle of the hold, the whole heap; the highest between points never below the value.
  bool saw_hold = false;
  for (const analysis::TimelinePoint& p : t.points) {
    EXPECT_GE(p.max, p.live);
    if (p.t_ms > 1.2 * kPhaseMs && p.t_ms < 1.8 * kPhaseMs) {
      saw_hold = true;
      EXPECT_NEAR(static_cast<double>(p.live), kCache, Bound(kCache)) << p.t_ms;
    }
  }
  EXPECT_TRUE(saw_hold);
}

TEST_F(TimelineTest, AForkedChildStartsATimelineOfItsOwn) {
  const analysis::Timeline parent = TimelineOf(Final(false));
  const analysis::Timeline child = TimelineOf(Final(true));
  // Forked after the three phases: it starts then, lives ~250 ms, and holds its own 1 MiB only.
  EXPECT_GE(child.start_ns, parent.start_ns + static_cast<uint64_t>(3 * kPhaseMs) * 1000000);
  EXPECT_LT(child.duration_ms(), parent.duration_ms());
  EXPECT_LT(static_cast<double>(child.peak), kLeak + 1024 * 1024 + Bound(kLeak + 1024 * 1024));
}

TEST_F(TimelineTest, TheRunEndsWithTheStoryTheLeakApartFromTheCache) {
  const std::vector<std::string> lines = Lines(run_->err);
  auto find = [&lines](const std::string& prefix, size_t from) {
    for (size_t i = from; i < lines.size(); ++i) {
      if (lines[i].rfind(prefix, 0) == 0) return i;
    }
    return lines.size();
  };
  const size_t summary = find("Summary of pid ", 0);
  ASSERT_LT(summary, lines.size()) << run_->err;
  const size_t peak = find("  peak ", summary), sparkline = find("  heap ", summary),
               never_freed = find("  never freed ", summary),
               freed = find("  freed later ", summary),
               temporaries = find("  temporaries ", summary);
  ASSERT_LT(temporaries, lines.size()) << run_->err;
  EXPECT_LT(peak, sparkline);
  EXPECT_LT(never_freed, freed);
  // The leak is the one site never freed; the cache is what was freed.
  EXPECT_NE(lines[never_freed + 1].find("site_phase_leak"), std::string::npos) << run_->err;
  EXPECT_NE(lines[freed + 1].find("site_phase_cache"), std::string::npos) << run_->err;
  EXPECT_NE(lines[temporaries + 1].find("site_phase_temporary"), std::string::npos) << run_->err;
  // The next commands as the user can paste them where heaprec ran: heaprec's path (the test's
  // heaprec is not on $PATH) and the profile's path, from the run's directory.
  std::smatch next;
  ASSERT_TRUE(std::regex_search(run_->err, next, std::regex("Next: (\\S+) report --lines (\\S+)")))
      << run_->err;
  const auto from_run = [](const std::string& path) {
    return path.front() == '/' ? std::filesystem::path(path)
                               : dir_->path() / std::filesystem::path(path);
  };
  EXPECT_TRUE(std::filesystem::equivalent(from_run(next[1]), HEAPREC_BIN)) << next[1];
  EXPECT_TRUE(std::filesystem::exists(from_run(next[2]))) << next[2];
}

TEST_F(TimelineTest, SummaryCommandTellsTheSameFromTheFiles) {
  RunResult summary =
      RunProgram({HEAPREC_BIN, "summary", dir_->path()}, dir_->path(),
                 {{"LANG", "C"}, {"LC_ALL", std::nullopt}, {"LC_CTYPE", std::nullopt}});
  ASSERT_EQ(summary.status, 0) << summary.err;
  // Two processes, the parent (the larger peak) first.
  const size_t parent = summary.out.find("Summary of pid ");
  const size_t child = summary.out.find("Summary of pid ", parent + 1);
  ASSERT_NE(child, std::string::npos) << summary.out;
  EXPECT_LT(summary.out.find("site_phase_leak"), child) << summary.out;
  // Without a UTF-8 locale: ASCII only.
  for (unsigned char c : summary.out) ASSERT_LT(c, 0x80) << summary.out;
}

}  // namespace
}  // namespace heaprec::e2e
