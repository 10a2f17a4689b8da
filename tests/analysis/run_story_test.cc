#include "analysis/run_story.h"

#include <gtest/gtest.h>

#include "leak_profiles.h"
#include "schema/profile_schema.h"

namespace heaprec::analysis {
namespace {

using test_support::leaks::Group;
using test_support::leaks::kChurn;
using test_support::leaks::kFlat;
using test_support::leaks::kLeak;
using test_support::leaks::MakeProfile;
using test_support::leaks::SetReason;

// An exact run: a leak (10 x 1000 B, never freed), a cache (100 x 1000 B at the peak, freed by
// the exit) and churn (64 B objects, 40 of them temporary).
struct LeakAndCache {
  profile::Profile peak, final_profile;
  LeakAndCache() {
    peak = MakeProfile(7, 1, 1, {{kLeak, 10, 1000}, {kFlat, 100, 1000}});
    SetReason(peak, "peak");
    final_profile = MakeProfile(7, 2, 1, {{kLeak, 10, 1000}, {kFlat, 0, 1000}, {kChurn, 0, 64}});
    SetReason(final_profile, "exit");
    profile::Sample& churn = final_profile.samples.back();
    churn.values = {500, 500 * 64, 0, 0};  // allocated, none live
    churn.labels.push_back({.key = schema::kTemporaryLabel, .num = 40, .num_unit = "count"});
    final_profile.samples[1].values = {100, 100 * 1000, 0, 0};
    final_profile.comments.push_back(
        "rss=1000000 rss_file=200000 malloc_in_use=12000 malloc_free=50000 profiler_bytes=3000");
  }
};

TEST(RunStory, SeparatesTheLeakFromTheCache) {
  LeakAndCache run;
  const RunStory story = ComputeRunStory(run.final_profile, &run.peak, 5);
  EXPECT_FALSE(story.sampled);
  EXPECT_EQ(story.pid, 7);
  EXPECT_EQ(story.reason, "exit");
  EXPECT_EQ(story.peak, 110000);
  EXPECT_TRUE(story.peak_known);
  EXPECT_FALSE(story.peak_ms.has_value());  // no timeline: the peak profile's total
  // The final profile alone, without a timeline, saw no peak.
  EXPECT_FALSE(ComputeRunStory(run.final_profile, nullptr, 5).peak_known);
  EXPECT_EQ(story.never_freed.total, 10000);
  ASSERT_EQ(story.never_freed.top.size(), 1u);
  EXPECT_EQ(story.never_freed.top[0].value, 10000);
  EXPECT_NE(story.never_freed.top[0].label.find("leak"), std::string::npos);
  EXPECT_EQ(story.freed_before_exit.total, 100000);
  ASSERT_EQ(story.freed_before_exit.top.size(), 1u);
  EXPECT_NE(story.freed_before_exit.top[0].label.find("flat"), std::string::npos);
  EXPECT_EQ(story.freed_before_exit.top[0].value, 100000);
}

TEST(RunStory, RanksTemporariesAndCountsSizes) {
  LeakAndCache run;
  const RunStory story = ComputeRunStory(run.final_profile, &run.peak, 5);
  EXPECT_EQ(story.temporaries.total, 40);
  ASSERT_EQ(story.temporaries.top.size(), 1u);
  EXPECT_NE(story.temporaries.top[0].label.find("churn"), std::string::npos);
  EXPECT_EQ(story.allocations, 10 + 100 + 500);
  ASSERT_EQ(story.sizes.size(), 2u);
  EXPECT_EQ(story.sizes[0].high, 64u);  // 64 B objects: the <=64 B bucket
  EXPECT_EQ(story.sizes[0].objects, 500);
  EXPECT_EQ(story.sizes[1].low, 257u);  // 1000 B: (256 B, 1 KiB]
  EXPECT_EQ(story.sizes[1].objects, 110);
  EXPECT_EQ(story.sizes[1].bytes, 110000);
}

// A profile that counts allocations but not their sizes (Ruby's: alloc_objects, no alloc_space)
// ranks them by site instead of a size histogram: where the churn is.
TEST(RunStory, RanksAllocationsWhenTheirSizesAreUnknown) {
  profile::Profile p = MakeProfile(7, 1, 1, {{kLeak, 10, 1000}, {kChurn, 0, 64}});
  p.samples[0].values[0] = 30;                       // 30 allocated at the leak's site, 10 alive
  p.samples[1].values[0] = 500;                      // 500 at the churn's, none alive
  p.sample_types.erase(p.sample_types.begin() + 1);  // alloc_space
  for (profile::Sample& sample : p.samples) sample.values.erase(sample.values.begin() + 1);
  const RunStory story = ComputeRunStory(p, nullptr, 5);
  EXPECT_TRUE(story.sizes.empty());
  EXPECT_EQ(story.allocated.total, 530);
  EXPECT_EQ(story.allocated.sites, 2u);
  ASSERT_EQ(story.allocated.top.size(), 2u);
  EXPECT_NE(story.allocated.top[0].label.find("churn"), std::string::npos);
  EXPECT_EQ(story.allocated.top[0].value, 500);
  // With sizes, the histogram tells it instead.
  LeakAndCache run;
  EXPECT_EQ(ComputeRunStory(run.final_profile, &run.peak, 5).allocated.sites, 0u);
}

TEST(RunStory, ExplainsTheResidentSet) {
  LeakAndCache run;
  const RssAccount rss = ComputeRunStory(run.final_profile, nullptr, 5).rss;
  EXPECT_EQ(rss.rss, 1000000);
  EXPECT_EQ(rss.heap, 10000);
  EXPECT_EQ(rss.overhead(), 2000);
  EXPECT_EQ(rss.malloc_free, 50000);
  EXPECT_EQ(rss.rest(), 1000000 - 200000 - 12000 - 50000 - 3000);
  // Without malloc's accounting (another allocator, a crash), the rest is after the heap alone.
  run.final_profile.comments.back() = "rss=1000000";
  const RssAccount bare = ComputeRunStory(run.final_profile, nullptr, 5).rss;
  EXPECT_EQ(bare.overhead(), -1);
  EXPECT_EQ(bare.rest(), 1000000 - 10000);
}

// An attached process: malloc's bytes in use include the blocks it held before the attach, which
// no sample covers. They are not the allocator's overhead: heaprec attach's estimate of them
// (unattributed) comes off before the overhead is derived. Started dormant, the process has no
// such estimate: the account says it is attached.
TEST(RunStory, AnAttachedProcessesHeapFromBeforeTheAttachIsNotOverhead) {
  LeakAndCache run;
  std::string& counters = run.final_profile.comments.back();
  counters.replace(counters.find("malloc_in_use=12000"), 19, "malloc_in_use=912000");
  run.final_profile.comments.push_back(
      "attached=1 attached_at=1796655779 injected=1 held_at_attach=950000 rss_at_attach=990000 "
      "heap_in_use=905000 unattributed=899000 held_walked=940000 "
      "held_by_size=11:800000:500,10:100000:120,junk,6:40000:900");
  const RunStory story = ComputeRunStory(run.final_profile, nullptr, 5);
  ASSERT_TRUE(story.header.attach);
  const AttachFacts& attach = *story.header.attach;
  EXPECT_EQ(attach.attaches, 1);
  EXPECT_EQ(attach.attached_at_s, 1796655779);
  EXPECT_TRUE(attach.injected);
  EXPECT_EQ(attach.held_at_attach, 950000);
  EXPECT_EQ(attach.heap_in_use, 905000);
  EXPECT_EQ(attach.unattributed, 899000);
  EXPECT_EQ(attach.held_walked, 940000);
  ASSERT_EQ(attach.held_by_size.size(), 3u);  // the malformed entry skipped
  EXPECT_EQ(attach.held_by_size[0].size_class, 11);
  EXPECT_EQ(attach.held_by_size[0].bytes, 800000);
  EXPECT_EQ(attach.held_by_size[0].blocks, 500);
  EXPECT_EQ(attach.held_by_size[2].size_class, 6);
  EXPECT_TRUE(story.rss.attached);
  EXPECT_EQ(story.rss.before_attach, 899000);
  EXPECT_EQ(story.rss.overhead(), 912000 - 10000 - 899000);

  run.final_profile.comments.back() = "attached=2 attached_at=1796655779";
  const RunStory dormant = ComputeRunStory(run.final_profile, nullptr, 5);
  ASSERT_TRUE(dormant.header.attach);
  EXPECT_EQ(dormant.header.attach->attaches, 2);
  EXPECT_FALSE(dormant.header.attach->injected);
  EXPECT_EQ(dormant.header.attach->unattributed, -1);
  EXPECT_TRUE(dormant.rss.attached);
  EXPECT_EQ(dormant.rss.before_attach, -1);
  EXPECT_EQ(dormant.rss.overhead(), 912000 - 10000);

  run.final_profile.comments.pop_back();
  const RunStory never = ComputeRunStory(run.final_profile, nullptr, 5);
  EXPECT_FALSE(never.header.attach);
  EXPECT_FALSE(never.rss.attached);
}

// mallinfo2's free bytes include pages never touched or given back: the account never explains
// more than the resident set holds.
TEST(RunStory, MallocFreeMemoryIsCountedOnlyAsFarAsItCanBeResident) {
  LeakAndCache run;
  std::string& counters = run.final_profile.comments.back();
  counters.replace(counters.find("malloc_free=50000"), 17, "malloc_free=900000");
  const RssAccount rss = ComputeRunStory(run.final_profile, nullptr, 5).rss;
  EXPECT_EQ(rss.malloc_free, 900000);
  EXPECT_EQ(rss.malloc_free_resident(), 1000000 - 200000 - 12000 - 3000);
  EXPECT_EQ(rss.rest(), 0);
}

TEST(RunStory, TheTimelineGivesThePeakAndWhen) {
  LeakAndCache run;
  run.final_profile.comments.push_back(
      std::string(schema::kTimelinePrefix) +
      " start_ns=1 interval=1 peak_ms=2500 peak=150000"
      " points=0,0,0,0,0;2500,150000,150000,0,0;3000,10000,150000,0,0");
  const RunStory story = ComputeRunStory(run.final_profile, &run.peak, 5);
  EXPECT_EQ(story.peak, 150000);  // higher than the peak profile: the timeline saw every sample
  EXPECT_EQ(story.peak_ms, 2500u);
  ASSERT_TRUE(story.timeline.has_value());
  EXPECT_EQ(story.timeline->points.size(), 3u);
}

TEST(RunStory, SampledNoiseIsNotReportedAsFreed) {
  // Sampled at 512 KiB, the same heap in both profiles but for a wobble of one sample.
  profile::Profile peak = MakeProfile(7, 1, 524288, {{kFlat, 200, 4096}});
  profile::Profile final_profile = MakeProfile(7, 2, 524288, {{kFlat, 199, 4096}});
  SetReason(peak, "peak");
  SetReason(final_profile, "exit");
  const RunStory story = ComputeRunStory(final_profile, &peak, 5);
  EXPECT_TRUE(story.sampled);
  EXPECT_EQ(story.freed_before_exit.sites, 0u);
  EXPECT_GT(story.never_freed.error, 0);
}

TEST(RunStory, TopLimitsTheSitesNotTheirCount) {
  LeakAndCache run;
  const RunStory story = ComputeRunStory(run.final_profile, &run.peak, 0);
  EXPECT_EQ(story.never_freed.sites, 1u);
  EXPECT_TRUE(story.never_freed.top.empty());
}

}  // namespace
}  // namespace heaprec::analysis
