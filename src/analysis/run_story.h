// The story of one process's run, from its final profile (and its peak profile, when it wrote
// one): the summary `heaprec run` prints at the end and `heaprec summary` prints for any profiles
// (render/summary.h). In a few ranked lines: how the heap went over time and when it peaked (the
// timeline, analysis/timeline.h), what was never freed (the sites holding memory at exit: the
// leak), what was held at the peak and freed before the exit (caches, buffers: not a leak), how
// much of the resident set the heap explains, the sites of the most temporary allocations, and the
// sizes allocated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/profile_header.h"
#include "analysis/timeline.h"
#include "profile/profile.h"

namespace heaprec::analysis {

// A site (report row: the user's frame that allocated) and what it stands for in one ranking.
struct StorySite {
  std::string label;  // FrameId::Label(): "name file.cc:LINE"
  int64_t value = 0;  // bytes, or objects for temporaries
  double error = 0;   // the half-width of value's 95% interval; 0 when exact or not estimated
};

struct StoryRanking {
  int64_t total = 0;
  double error = 0;
  size_t sites = 0;            // how many sites hold a part of it
  std::vector<StorySite> top;  // at most `top` of them, by decreasing value
};

// What the resident set at the end is made of, from the profile's comments (the preload library's
// rss, rss_file, malloc_in_use, malloc_free and profiler_bytes), each -1 when unknown.
struct RssAccount {
  int64_t rss = -1;
  int64_t file_backed = -1;  // of rss: libraries' pages, mapped files
  int64_t heap = -1;         // what the program holds (the profile's inuse_space)
  double heap_error = 0;
  int64_t malloc_in_use = -1;  // glibc's chunks in use: heap plus its headers and rounding
  int64_t malloc_free = -1;    // free memory glibc keeps in its arenas (may be partly not resident)
  int64_t profiler = -1;       // heaprec's own memory
  // A profile of an attached process: its heap is what was allocated since the attach, and
  // malloc_in_use also counts the blocks from before it that are still live, which heaprec attach
  // estimates (before_attach; -1 where the process was started dormant instead).
  bool attached = false;
  int64_t before_attach = -1;
  // malloc_in_use - heap (- before_attach): the allocator's overhead per block (-1: unknown); of
  // an attached process without the estimate, with the blocks from before the attach.
  int64_t overhead() const;
  // How much of malloc_free can be resident: mallinfo2 counts free chunks whether or not their
  // pages were ever touched or were given back with madvise, so at most what the resident set has
  // left after the other known parts (malloc_free when rss is unknown).
  int64_t malloc_free_resident() const;
  // rss minus every part above that is known: stacks, other anonymous mappings, the program's
  // own allocators (-1: rss unknown).
  int64_t rest() const;
};

// Allocations of sizes in [low, high] (powers of four from 16 B; the last bucket open-ended).
struct SizeBucket {
  uint64_t low = 0, high = 0;
  int64_t objects = 0;  // allocations (alloc_objects)
  int64_t bytes = 0;    // their bytes (alloc_space)
};

struct RunStory {
  ProfileHeader header;  // of the final profile
  bool sampled = false;  // values are estimates (they carry an error)
  std::optional<int64_t> pid;
  std::string reason;  // the final profile's reason (exit, crash, ...)
  std::optional<Timeline> timeline;

  // The highest live heap: the timeline's, else the peak profile's, else the final one's.
  // Whether anything saw the peak (a timeline or a peak profile); without either (a Ruby
  // profile), `peak` is only the final profile's total and is not told.
  bool peak_known = false;
  int64_t peak = 0;
  double peak_error = 0;
  std::optional<uint64_t> peak_ms;  // when, since the timeline's start (with a timeline)

  StoryRanking never_freed;  // the final profile's inuse_space by site
  // Per site, held in the peak profile and not at exit: the sites whose drop is larger than the
  // sampling noise, their total the sum of those drops.
  StoryRanking freed_before_exit;
  RssAccount rss;
  StoryRanking temporaries;  // objects freed before their thread allocated again, by site
  // Every allocation by site (alloc_objects), for profiles that have no sizes to histogram and no
  // temporaries to rank (Ruby's): where the churn is.
  StoryRanking allocated;
  int64_t allocations = 0;        // all allocations (alloc_objects)
  std::vector<SizeBucket> sizes;  // non-empty buckets, by size
};

// `final_profile`: the process's last profile; `peak_profile`: its peak profile or null. `top`:
// the sites kept per ranking.
RunStory ComputeRunStory(const profile::Profile& final_profile,
                         const profile::Profile* peak_profile, size_t top);

}  // namespace heaprec::analysis
