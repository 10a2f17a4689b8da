#include "render/summary.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace heaprec::render {
namespace {

using analysis::RunStory;

analysis::Timeline Rising(int points) {
  analysis::Timeline t;
  t.interval = 1;
  for (int i = 0; i < points; ++i) {
    t.points.push_back({.t_ms = static_cast<uint64_t>(i) * 100, .live = i, .max = i});
  }
  return t;
}

TEST(Sparkline, ScalesFromNothingToTheHighestInBlocksOrAscii) {
  const std::vector<double> values = {0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(Sparkline(values, 8, true), "▁▂▃▄▅▆▇█");
  EXPECT_EQ(Sparkline(values, 8, false), "_.-:=+*#");
}

TEST(Sparkline, AColumnShowsTheHighestOfItsPointsAndWidthBounds) {
  analysis::Timeline t = Rising(99);
  t.points[10].max = 1000;  // a spike between points: must not vanish when columns merge points
  const std::string line = Sparkline(t, 10, false);
  EXPECT_EQ(line.size(), 10u);
  EXPECT_EQ(line[1], '#');
  EXPECT_EQ(Sparkline(Rising(3), 40, false).size(), 4u);  // its points and the end, no wider
  EXPECT_EQ(Sparkline(analysis::Timeline{}, 40, true), "");
  EXPECT_EQ(Sparkline(std::vector<double>{}, 40, true), "");
}

// A program that frees its heap at exit after the last point: the last point's maximum is still
// the peak, the heap's end is the last column.
TEST(Sparkline, TheHeapsEndIsItsLastColumn) {
  analysis::Timeline t = Rising(8);
  t.points.back().live = 0;
  EXPECT_EQ(Sparkline(t, 40, false), "_.-:=+*#_");
}

RunStory Story() {
  RunStory s;
  s.pid = 42;
  s.reason = "exit";
  s.sampled = true;
  s.header.period = 524288;
  s.timeline = Rising(8);
  for (size_t i = 0; i < s.timeline->points.size(); ++i) {
    analysis::TimelinePoint& p = s.timeline->points[i];
    p.rss = i << 20;
    p.allocated = static_cast<int64_t>(i) << 20;
  }
  s.timeline->points.back().t_ms = 650;  // 50 ms after the point before: 20 MiB/s, not counted
  s.peak = 300 << 20;
  s.peak_error = 5 << 20;
  s.peak_known = true;
  s.peak_ms = 600;
  s.never_freed = {.total = 26 << 20,
                   .error = 1 << 20,
                   .sites = 1,
                   .top = {{"Session::Session service.cc:88", 26 << 20, 1 << 20}}};
  s.freed_before_exit = {.total = 270 << 20,
                         .error = 4 << 20,
                         .sites = 1,
                         .top = {{"Cache::Put cache.cc:40", 270 << 20, 4 << 20}}};
  s.rss = {.rss = 400 << 20,
           .file_backed = 10 << 20,
           .heap = 26 << 20,
           .heap_error = 1 << 20,
           .malloc_in_use = 28 << 20,
           .malloc_free = 300 << 20,
           .profiler = 2 << 20};
  s.temporaries = {.total = 1234567, .sites = 1, .top = {{"Parse parse.cc:12", 1234567, 0}}};
  s.allocations = 2000;
  s.sizes = {{.low = 0, .high = 16, .objects = 1500, .bytes = 15000},
             {.low = 1048577, .high = UINT64_MAX, .objects = 500, .bytes = 985000}};
  return s;
}

TEST(RunStoryText, TellsPeakLeakCacheRssTemporariesAndSizesInOrder) {
  std::ostringstream out;
  PrintRunStory(Story(), {.unicode = true}, out);
  const std::string text = out.str();
  const char* in_order[] = {
      "Summary of pid 42 (sampled every 512.0 KiB; ± is a 95% interval):",
      "  peak         300.0 MiB ±5.0 MiB at 600 ms of 650 ms",
      "  heap         ▁▂▃▄▅▆▇██",
      "  resident     ▁▂▃▄▅▆▇█ at most 7.0 MiB",
      // 1 MiB per 100 ms, the last 1 MiB in 50 ms: twice the rate, but too short a gap to be the
      // highest; 7 MiB in 650 ms on average.
      "  allocating   ▅▅▅▅▅▅█ 10.8 MiB/s on average, 10.0 MiB/s at most",
      "  never freed  26.0 MiB ±1.0 MiB at exit, in 1 site",
      "Session::Session service.cc:88",
      "  freed later  270.0 MiB ±4.0 MiB held at the peak and freed before the end",
      "Cache::Put cache.cc:40",
      // 28 MiB in use by malloc is within the estimate's error of the 26 MiB heap: no overhead
      // told.
      "  RSS          400.0 MiB at exit: in use by malloc 28.0 MiB (heap 26.0 MiB ±1.0 MiB), free "
      "but kept by malloc 300.0 MiB, heaprec 2.0 MiB, mapped files 10.0 MiB, the rest (stacks, "
      "other mappings) 60.0 MiB",
      "  temporaries  ≈1,234,567 objects",
      "      1,234,567             Parse parse.cc:12",
      "  sizes        ≈2,000 allocations, 976.6 KiB (of allocations / of bytes): ≤16 B 75%/2%, "
      ">1.0 MiB 25%/98%",
  };
  size_t at = 0;
  for (const char* expected : in_order) {
    const size_t found = text.find(expected, at);
    ASSERT_NE(found, std::string::npos) << "missing after offset " << at << ": " << expected << "\n"
                                        << text;
    at = found;
  }
}

// malloc's overhead is told once the heap's estimate cannot explain it; exact profiles tell it as
// is.
TEST(RunStoryText, MallocOverheadOnlyBeyondTheEstimatesError) {
  RunStory s = Story();
  s.rss.heap_error = 0.5 * (1 << 20);
  std::ostringstream sampled;
  PrintRunStory(s, {}, sampled);
  EXPECT_NE(sampled.str().find("in use by malloc 28.0 MiB (heap 26.0 MiB ±512.0 KiB, overhead "
                               "≈2.0 MiB)"),
            std::string::npos)
      << sampled.str();
  s.rss.heap_error = 0;
  std::ostringstream exact;
  PrintRunStory(s, {}, exact);
  EXPECT_NE(exact.str().find("in use by malloc 28.0 MiB (heap 26.0 MiB, overhead 2.0 MiB)"),
            std::string::npos)
      << exact.str();
}

// A profile of a process heaprec attach loaded heaprec into: the summary says first that only
// allocations since the attach are counted and what the heap held then; the blocks from before
// the attach are told apart from malloc's overhead in the RSS line.
TEST(RunStoryText, AnAttachedProcessSaysWhatItHeldBeforeTheAttach) {
  RunStory s = Story();
  s.reason = "request";
  s.header.attach = analysis::AttachFacts{
      .attaches = 1,
      .attached_at_s = 1796655779,
      .injected = true,
      .held_at_attach = 314 << 20,
      .heap_in_use = 320 << 20,
      .unattributed = 300 << 20,
      .held_walked = 313 << 20,
      .held_by_size = {
          {11, 300 << 20, 300000}, {10, 10 << 20, 15000}, {22, 3 << 20, 1}, {6, 1 << 19, 8000}}};
  s.rss.attached = true;
  s.rss.malloc_in_use = 330 << 20;
  s.rss.before_attach = 300 << 20;
  std::ostringstream out;
  PrintRunStory(s, {.unicode = true}, out);
  const std::string text = out.str();
  EXPECT_NE(text.find("Summary of pid 42 (sampled every 512.0 KiB; ± is a 95% interval):\n"
                      "  attached     2026-12-07 15:02:59 UTC: only allocations since are counted "
                      "below; the heap held 314.0 MiB then: 300.0 MiB in 1-2 KiB blocks (96%, "
                      "300000 blocks), 10.0 MiB in 512 B-1 KiB blocks (3%, 15000 blocks), 3.0 MiB "
                      "in 2-4 MiB blocks (1%, 1 block)\n  peak "),
            std::string::npos)
      << text;
  // 330 MiB in use by malloc: 26 MiB sampled since the attach, 300 MiB from before it, and 4 MiB
  // that neither explains.
  EXPECT_NE(text.find("in use by malloc 330.0 MiB (heap 26.0 MiB ±1.0 MiB since the attach, from "
                      "before the attach ≈300.0 MiB, overhead ≈4.0 MiB)"),
            std::string::npos)
      << text;

  // Started dormant: no estimate of what it held before; the difference is both.
  s.header.attach = analysis::AttachFacts{.attaches = 2, .attached_at_s = 1796655779};
  s.rss.before_attach = -1;
  std::ostringstream dormant;
  PrintRunStory(s, {.unicode = true}, dormant);
  EXPECT_NE(dormant.str().find("\n  attached     2026-12-07 15:02:59 UTC: only allocations since "
                               "the attach (the latest) are counted below\n"),
            std::string::npos)
      << dormant.str();
  EXPECT_NE(dormant.str().find("(heap 26.0 MiB ±1.0 MiB since the attach, from before the attach "
                               "and overhead ≈304.0 MiB)"),
            std::string::npos)
      << dormant.str();

  // Another allocator (jemalloc, tcmalloc): glibc's counts say nothing of its heap, which is not
  // known; the rest of the RSS holds the blocks from before the attach.
  s.header.attach =
      analysis::AttachFacts{.attaches = 1, .attached_at_s = 1796655779, .injected = true};
  s.rss.malloc_in_use = -1;
  s.rss.malloc_free = -1;
  s.rss.before_attach = -1;
  s.rss.rss = 400 << 20;
  std::ostringstream other;
  PrintRunStory(s, {.unicode = true}, other);
  EXPECT_NE(other.str().find("\n  attached     2026-12-07 15:02:59 UTC: only allocations since are "
                             "counted below; what the heap held then is not known (its malloc is "
                             "not glibc's)\n"),
            std::string::npos)
      << other.str();
  EXPECT_NE(other.str().find(": heap 26.0 MiB ±1.0 MiB since the attach, "), std::string::npos)
      << other.str();
  EXPECT_NE(other.str().find(", the rest (blocks from before the attach, the allocator's own and "
                             "free memory, stacks, other mappings) "),
            std::string::npos)
      << other.str();
  EXPECT_EQ(other.str().find("held 0 B"), std::string::npos) << other.str();
}

// mallinfo2's free bytes none of which can be resident: no "(of N free in its arenas)" after a
// part that was not printed.
TEST(RunStoryText, MallocsFreeBytesAreToldOnlyWhenSomeAreResident) {
  RunStory s = Story();
  s.rss.rss = 40 << 20;  // all of it explained by the other parts
  s.rss.file_backed = 10 << 20;
  s.rss.profiler = 2 << 20;
  std::ostringstream out;
  PrintRunStory(s, {}, out);
  EXPECT_EQ(s.rss.malloc_free_resident(), 0);
  EXPECT_EQ(out.str().find("free in its arenas"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("free but kept by malloc"), std::string::npos) << out.str();
}

TEST(RunStoryText, AsciiOnlyWithoutAUtf8Locale) {
  std::ostringstream out;
  PrintRunStory(Story(), {.unicode = false}, out);
  for (unsigned char c : out.str()) ASSERT_LT(c, 0x80) << out.str();
  EXPECT_NE(out.str().find("300.0 MiB +-5.0 MiB"), std::string::npos) << out.str();
}

// A Ruby profile: sampled per object, no timeline and no peak profile, so no peak to tell.
TEST(RunStoryText, ARubyProfileSaysObjectsAndTellsNoPeak) {
  RunStory s = Story();
  s.header.per_object = true;
  s.header.period = 1000;
  s.timeline.reset();
  s.peak_known = false;
  std::ostringstream out;
  PrintRunStory(s, {}, out);
  EXPECT_EQ(
      out.str().rfind("Summary of pid 42 (sampled 1 in 1,000 objects; ± is a 95% interval):\n", 0),
      0u)
      << out.str();
  EXPECT_EQ(out.str().find("\n  peak "), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("never freed  26.0 MiB"), std::string::npos) << out.str();
}

TEST(RunStoryText, AllocationsBySiteWithTheirIntervals) {
  RunStory s = Story();
  s.allocated.total = 4790000;
  s.allocated.error = 135583;
  s.allocated.sites = 7;
  s.allocated.top = {{"String#split app.rb:38", 2571000, 99332}};
  std::ostringstream out;
  PrintRunStory(s, {}, out);
  EXPECT_NE(out.str().find("  allocated    ≈4,790,000 ±135,583 objects in all, dead or alive (the "
                           "churn), from 7 sites:\n      2,571,000 ±99,332    String#split "
                           "app.rb:38\n"),
            std::string::npos)
      << out.str();
}

TEST(RunStoryText, AProcessKilledIsStillHeldNotNeverFreed) {
  RunStory s = Story();
  s.reason = "killed";
  std::ostringstream out;
  PrintRunStory(s, {}, out);
  EXPECT_NE(out.str().find("  still held   26.0 MiB ±1.0 MiB when killed"), std::string::npos)
      << out.str();
  EXPECT_EQ(out.str().find("never freed"), std::string::npos);
}

}  // namespace
}  // namespace heaprec::render
