// Exact mode (--sample-interval 1: every allocation recorded with weight 1): every site's four
// values must match what the workload is known to allocate and keep, to the byte and the object.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <regex>
#include <string>

#include "e2e_test_base.h"
#include "expected_sites.h"

namespace heaprec::e2e {
namespace {

class ExactTest : public E2eTest {};

void ExpectSites(const Profile& profile, const std::vector<ExpectedSite>& sites) {
  for (const ExpectedSite& site : sites) {
    EXPECT_EQ(SiteValues(profile, site.name), site.values) << site.name;
  }
}

TEST_F(ExactTest, CAllocatorSites) {
  constexpr long kCount = 200, kChurn = 1000;
  Profiled({"--sample-interval", "1"},
           {WL_C_SITES, std::to_string(kCount), std::to_string(kChurn)});
  Profile profile = OnlyProfile();
  // Three comments, so that pprof's header shows three lines: what the profile is, its counters,
  // and what the peak profile and the heap record cost; then the timeline, which is for heaprec.
  ASSERT_EQ(profile.comments.size(), 4u);
  EXPECT_TRUE(std::regex_match(
      profile.comments[0], std::regex("heaprec " HEAPREC_VERSION
                                      " pid=[0-9]+ reason=exit sample_interval=1 unwinder=\\w+")))
      << profile.comments[0];
  EXPECT_TRUE(std::regex_match(profile.comments[1],
                               std::regex("samples=[0-9]+ live_samples=[0-9]+ dropped=0 "
                                          "unwind_failures=[0-9]+ truncated_stacks=[0-9]+ "
                                          "missed_frees=[0-9]+ profiler_bytes=[0-9]+ "
                                          "rss=[0-9]+ rss_file=[0-9]+ malloc_in_use=[0-9]+ "
                                          "malloc_free=[0-9]+ malloc_arena=[0-9]+")))
      << profile.comments[1];
  // heap_record_bytes only when the record was started (the dump thread starts it): a program this
  // short may end first, and then the field is absent (profile_comments.cc), as it is in 1 run of
  // about 5 here.
  EXPECT_TRUE(
      std::regex_match(profile.comments[2], std::regex("peak_writes=[0-9]+ peak_write_us=[0-9]+ "
                                                       "peak_captures=[0-9]+ peak_capture_us=[0-9]+"
                                                       "( heap_record_bytes=[0-9]+)?")))
      << profile.comments[2];
  EXPECT_EQ(profile.comments[3].rfind("#heaprec-timeline v=1 ", 0), 0u) << profile.comments[3];
  EXPECT_EQ(CommentValue(profile, "sample_interval"), 1);
  ExpectSites(profile, CSites(kCount, kChurn));
}

TEST_F(ExactTest, CxxAllocatorSitesAndContainers) {
  constexpr long kCount = 200, kChurn = 1000, kVector = 1000, kString = 1000;
  RunResult run = Profiled({"--sample-interval", "1"},
                           {WL_CXX_SITES, std::to_string(kCount), std::to_string(kChurn),
                            std::to_string(kVector), std::to_string(kString)});
  // The workload prints the containers' final capacities: the growth model must agree with them.
  EXPECT_NE(run.out.find("vector=" + std::to_string(VectorGrowth(kVector).live_bytes / 8) +
                         " string=" + std::to_string(StringGrowth(kString).live_bytes - 1)),
            std::string::npos)
      << run.out;
  ExpectSites(OnlyProfile(), CxxSites(kCount, kChurn, kVector, kString));
}

TEST_F(ExactTest, ThreadsWithCrossThreadFrees) {
  constexpr long kThreads = 4, kPerThread = 200;
  Profiled({"--sample-interval", "1"},
           {WL_THREADS, std::to_string(kThreads), std::to_string(kPerThread)});
  ExpectSites(OnlyProfile(), ThreadSites(kThreads, kPerThread));
}

TEST_F(ExactTest, ForkChildAndParentWriteTheirOwnProfiles) {
  constexpr long kN = 200;
  RunResult run = Profiled({"--sample-interval", "1"}, {WL_FORK, std::to_string(kN)});
  std::smatch match;
  ASSERT_TRUE(std::regex_search(run.err, match, std::regex("wl_fork: child (\\d+)"))) << run.err;
  const int64_t child_pid = std::stoll(match[1]);

  std::vector<std::string> files = Profiles();
  ASSERT_EQ(files.size(), 2u);
  Profile child, parent;
  int children = 0;
  for (const std::string& file : files) {
    Profile profile = ReadProfileFile(file);
    int64_t pid = CommentValue(profile, "pid");
    EXPECT_NE(file.find("/p." + std::to_string(pid) + ".pb.gz"), std::string::npos) << file;
    if (pid == child_pid) {
      child = profile;
      ++children;
    } else {
      parent = profile;
    }
  }
  ASSERT_EQ(children, 1) << "no profile has the child's pid " << child_pid;

  // The parent: its own objects only, none of the child's.
  EXPECT_EQ(SiteValues(parent, "site_before_fork"), (Values{kN, kN * 1000, kN, kN * 1000}));
  EXPECT_EQ(SiteValues(parent, "site_parent_after"), (Values{kN, kN * 3000, kN, kN * 3000}));
  EXPECT_EQ(SiteValues(parent, "site_child_alloc"), Values{});
  // The child: the inherited objects it did not free, live but allocated by its parent (its
  // alloc_* count its own allocations: merged, the two profiles count each once), and its own.
  EXPECT_EQ(SiteValues(child, "site_before_fork"),
            (Values{0, 0, kN - kN / 4, (kN - kN / 4) * 1000}));
  EXPECT_EQ(SiteValues(child, "site_child_alloc"), (Values{kN, kN * 2000, kN, kN * 2000}));
  EXPECT_EQ(SiteValues(child, "site_parent_after"), Values{});
}

TEST_F(ExactTest, ExitFromANonMainThread) {
  constexpr long kN = 200;
  Profiled({"--sample-interval", "1"}, {WL_THREAD_EXIT, std::to_string(kN)}, /*status=*/3);
  Profile profile = OnlyProfile();
  EXPECT_EQ(SiteValues(profile, "site_exit_main_live"), (Values{kN, kN * 1000, kN, kN * 1000}));
  EXPECT_EQ(SiteValues(profile, "site_exit_thread_live"), (Values{kN, kN * 2000, kN, kN * 2000}));
}

TEST_F(ExactTest, ApiDumpSeesTheMidRunLiveSet) {
  constexpr long kN = 200;
  // A relative dump path: both runs write it in their own working directory.
  RunResult run = Profiled({"--sample-interval", "1"}, {WL_API, "mid.pb.gz", std::to_string(kN)});
  EXPECT_EQ(run.out, "active=1 dump=0\n");
  std::vector<std::string> files = Profiles();
  ASSERT_EQ(files.size(), 2u);  // mid.pb.gz and p.<pid>.pb.gz
  ASSERT_EQ(files[0], dir_ / "mid.pb.gz");

  Profile mid = ReadProfileFile(files[0]);
  EXPECT_EQ(SiteValues(mid, "site_api_phase1"), (Values{kN, kN * 1000, kN, kN * 1000}));
  EXPECT_EQ(SiteValues(mid, "site_api_phase2"), Values{});
  EXPECT_EQ(CommentValue(mid, "pid"), CommentValue(ReadProfileFile(files[1]), "pid"));

  Profile final_profile = ReadProfileFile(files[1]);
  EXPECT_EQ(SiteValues(final_profile, "site_api_phase1"), (Values{kN, kN * 1000, 0, 0}));
  EXPECT_EQ(SiteValues(final_profile, "site_api_phase2"), (Values{kN, kN * 2000, kN, kN * 2000}));
}

// The peak profile, written at exit next to the final one, holds what was live at the peak (the
// site freed before the end), and the final profile does not. In exact mode the peak copy is taken
// once the live bytes pass 1.1x the previous copy, so it holds at least 1/1.1 of the true peak.
TEST_F(ExactTest, PeakProfileHoldsWhatWasLiveAtThePeak) {
  Profiled({"--sample-interval", "1"}, {WL_PEAK, "20000"});
  Profile final_profile = OnlyProfile();
  EXPECT_EQ(SiteValues(final_profile, "site_peak_build").inuse_space, 0);
  EXPECT_EQ(SiteValues(final_profile, "site_after_peak").inuse_space, 2000 * 1000);
  std::vector<std::string> peaks = PeakProfiles();
  ASSERT_EQ(peaks.size(), 1u);
  Profile peak = ReadProfileFile(peaks[0]);
  EXPECT_EQ(CommentText(peak, "reason"), "peak");
  Values at_peak = SiteValues(peak, "site_peak_build");
  EXPECT_GE(at_peak.inuse_space, static_cast<int64_t>(20000 * 1000 / 1.1));
  EXPECT_LE(at_peak.inuse_space, 20000 * 1000);
  EXPECT_EQ(at_peak.inuse_space, at_peak.inuse_objects * 1000);
  EXPECT_EQ(SiteValues(peak, "site_after_peak").inuse_space, 0);
  EXPECT_LE(peak.time_nanos, final_profile.time_nanos);
}

}  // namespace
}  // namespace heaprec::e2e
