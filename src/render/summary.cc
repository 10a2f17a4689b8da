#include "render/summary.h"

#include <algorithm>
#include <cmath>

#include "render/attach_note.h"
#include "render/format.h"
#include "schema/profile_schema.h"

namespace heaprec::render {
namespace {

using analysis::RunStory;
using analysis::StoryRanking;

constexpr const char* kLabelIndent = "  ";
constexpr const char* kSiteIndent = "      ";

std::string Bytes(int64_t value) { return FormatValue(value, schema::kBytesUnit); }

// "12.0 MiB ±1.1 MiB", or "12.0 MiB" when exact.
std::string BytesWithError(int64_t value, double error, bool unicode) {
  std::string text = Bytes(value);
  if (error > 0) text += std::string(unicode ? " ±" : " +-") + FormatBytes(error);
  return text;
}

// A count with thousands separated: "1,234,567".
std::string Count(int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  for (int at = static_cast<int>(digits.size()) - 3; at > 0; at -= 3) digits.insert(at, ",");
  return value < 0 ? "-" + digits : digits;
}

std::string Sites(size_t n) { return std::to_string(n) + (n == 1 ? " site" : " sites"); }

// What a ranking's values are, as PrintSites writes them.
enum class SiteValue { kBytes, kCount, kCountWithError };

void PrintSites(const StoryRanking& ranking, SiteValue kind, bool unicode, std::ostream& out) {
  for (const analysis::StorySite& site : ranking.top) {
    std::string value = kind == SiteValue::kBytes ? BytesWithError(site.value, site.error, unicode)
                                                  : Count(site.value);
    if (kind == SiteValue::kCountWithError && site.error > 0) {
      value += std::string(unicode ? " ±" : " +-") + Count(std::llround(site.error));
    }
    out << kSiteIndent << value << std::string(value.size() < 22 ? 22 - value.size() : 1, ' ')
        << site.label << "\n";
  }
}

// What the final profile's reason says of the moment the story ends.
const char* EndOf(const std::string& reason) {
  if (reason == schema::kReasonExit || reason == schema::kReasonUnderscoreExit) return "at exit";
  if (reason == schema::kReasonCrash) return "at the crash";
  if (reason == schema::kReasonTerminated || reason == schema::kReasonKilled) return "when killed";
  return "when the profile was written";
}

// Bytes allocated per second between points, freed ones too: the churn that the heap's curve does
// not show. The last point (written with the profile) can follow the one before by a millisecond;
// only gaps of a full spacing count for the highest rate.
void PrintAllocationRate(const analysis::Timeline& t, const SummaryOptions& options,
                         std::ostream& out) {
  constexpr uint64_t kMinGapMs = 100;
  if (t.points.size() < 2 || t.duration_ms() == 0 || t.points.back().allocated <= 0) return;
  std::vector<double> rates;
  double highest = 0;
  for (size_t i = 1; i < t.points.size(); ++i) {
    const uint64_t gap_ms = t.points[i].t_ms - t.points[i - 1].t_ms;
    const double bytes = static_cast<double>(t.points[i].allocated - t.points[i - 1].allocated);
    const double rate = gap_ms == 0 ? 0 : std::max(0.0, bytes) * 1000 / static_cast<double>(gap_ms);
    rates.push_back(rate);
    if (gap_ms >= kMinGapMs) highest = std::max(highest, rate);
  }
  const double average =
      static_cast<double>(t.points.back().allocated) * 1000 / static_cast<double>(t.duration_ms());
  out << kLabelIndent << "allocating   "
      << Sparkline(rates, options.sparkline_width, options.unicode) << " " << FormatBytes(average)
      << "/s on average";
  if (highest > 0) out << ", " << FormatBytes(highest) << "/s at most";
  out << "\n";
}

// A profile of an attached process counts only what was allocated since the attach: said before
// anything else, with what the heap held then (heaprec attach's estimate), which no line below
// includes.
void PrintAttached(const RunStory& story, std::ostream& out) {
  if (!story.header.attach) return;
  out << kLabelIndent << "attached     " << AttachedSummary(*story.header.attach) << "\n";
}

void PrintTimeline(const RunStory& story, const SummaryOptions& options, std::ostream& out) {
  if (!story.peak_known) return;
  out << kLabelIndent << "peak         "
      << BytesWithError(story.peak, story.peak_error, options.unicode);
  if (story.peak_ms && story.timeline) {
    out << " at " << FormatSeconds(*story.peak_ms / 1000.0) << " of "
        << FormatSeconds(story.timeline->duration_ms() / 1000.0);
  }
  out << "\n";
  if (!story.timeline) return;
  const analysis::Timeline& t = *story.timeline;
  const std::string heap = Sparkline(t, options.sparkline_width, options.unicode);
  if (heap.empty()) return;
  out << kLabelIndent << "heap         " << heap << "\n";
  std::vector<double> rss;
  for (const analysis::TimelinePoint& p : t.points) rss.push_back(static_cast<double>(p.rss));
  const double rss_top = *std::max_element(rss.begin(), rss.end());
  if (rss_top > 0) {
    out << kLabelIndent << "resident     "
        << Sparkline(rss, options.sparkline_width, options.unicode) << " at most "
        << Bytes(static_cast<int64_t>(rss_top)) << "\n";
  }
  PrintAllocationRate(t, options, out);
}

void PrintNeverFreed(const RunStory& story, const SummaryOptions& options, std::ostream& out) {
  const bool at_exit =
      story.reason == schema::kReasonExit || story.reason == schema::kReasonUnderscoreExit;
  out << kLabelIndent << (at_exit ? "never freed  " : "still held   ")
      << BytesWithError(story.never_freed.total, story.never_freed.error, options.unicode) << " "
      << EndOf(story.reason);
  if (story.never_freed.sites == 0) {
    out << "\n";
    return;
  }
  out << ", in " << Sites(story.never_freed.sites)
      << (at_exit ? " (leaks, or memory kept until exit)" : "") << ":\n";
  PrintSites(story.never_freed, SiteValue::kBytes, options.unicode, out);
}

void PrintFreed(const RunStory& story, const SummaryOptions& options, std::ostream& out) {
  if (story.freed_before_exit.sites == 0) return;
  out << kLabelIndent << "freed later  "
      << BytesWithError(story.freed_before_exit.total, story.freed_before_exit.error,
                        options.unicode)
      << " held at the peak and freed before the end (caches, buffers: not leaks), in "
      << Sites(story.freed_before_exit.sites) << ":\n";
  PrintSites(story.freed_before_exit, SiteValue::kBytes, options.unicode, out);
}

void PrintRss(const RunStory& story, const SummaryOptions& options, std::ostream& out) {
  const analysis::RssAccount& r = story.rss;
  if (r.rss < 0) return;
  out << kLabelIndent << "RSS          " << Bytes(r.rss) << " " << EndOf(story.reason) << ": ";
  const std::string heap = "heap " + BytesWithError(r.heap, r.heap_error, options.unicode);
  if (r.malloc_in_use >= 0) {
    // malloc's count is exact: it is the heap plus the allocator's per-block overhead. The
    // overhead is told only when the heap's estimate cannot account for the difference.
    const char* about = r.heap_error > 0 ? (options.unicode ? "≈" : "~") : "";
    out << "in use by malloc " << Bytes(r.malloc_in_use) << " (" << heap;
    if (r.attached) out << " since the attach";
    if (r.before_attach > 0) out << ", from before the attach " << about << Bytes(r.before_attach);
    if (r.overhead() > 2 * r.heap_error) {
      // Started dormant, the process has no estimate of what it held from before the attach.
      out << (r.attached && r.before_attach < 0 ? ", from before the attach and overhead "
                                                : ", overhead ")
          << about << Bytes(r.overhead());
    }
    out << ")";
  } else {
    // Another allocator's: what it holds is not known.
    out << heap << (r.attached ? " since the attach" : "");
  }
  auto part = [&out](const char* name, int64_t bytes) {
    if (bytes > 0) out << ", " << name << " " << Bytes(bytes);
  };
  part("free but kept by malloc", r.malloc_free_resident());
  if (r.malloc_free_resident() > 0 && r.malloc_free_resident() < r.malloc_free) {
    out << " (of " << Bytes(r.malloc_free) << " free in its arenas)";
  }
  part("heaprec", r.profiler);
  part("mapped files", r.file_backed);
  part(r.malloc_in_use >= 0 ? "the rest (stacks, other mappings)"
       : r.attached ? "the rest (blocks from before the attach, the allocator's own and free "
                      "memory, stacks, other mappings)"
                    : "the rest (the allocator's own and free memory, stacks, other mappings)",
       r.rest());
  out << "\n";
}

void PrintTemporaries(const RunStory& story, const SummaryOptions& options, std::ostream& out) {
  if (story.temporaries.sites == 0) return;
  out << kLabelIndent << "temporaries  " << (options.unicode ? "≈" : "~")
      << Count(story.temporaries.total)
      << " objects freed before their thread allocated again, from "
      << Sites(story.temporaries.sites) << ":\n";
  PrintSites(story.temporaries, SiteValue::kCount, options.unicode, out);
}

void PrintAllocated(const RunStory& story, const SummaryOptions& options, std::ostream& out) {
  if (story.allocated.sites == 0) return;
  out << kLabelIndent << "allocated    " << (options.unicode ? "≈" : "~")
      << Count(story.allocated.total);
  if (story.allocated.error > 0) {
    out << " " << (options.unicode ? "±" : "+-") << Count(std::llround(story.allocated.error));
  }
  out << " objects in all, dead or alive (the churn), from " << Sites(story.allocated.sites)
      << ":\n";
  PrintSites(story.allocated, SiteValue::kCountWithError, options.unicode, out);
}

// "≤16 B", "≤1.0 KiB", ">4.0 MiB".
std::string BucketName(const analysis::SizeBucket& b, bool unicode) {
  if (b.high == UINT64_MAX) return ">" + Bytes(static_cast<int64_t>(b.low - 1));
  return (unicode ? "≤" : "<=") + Bytes(static_cast<int64_t>(b.high));
}

void PrintSizes(const RunStory& story, const SummaryOptions& options, std::ostream& out) {
  if (story.sizes.empty() || story.allocations <= 0) return;
  int64_t bytes = 0;
  for (const analysis::SizeBucket& b : story.sizes) bytes += b.bytes;
  out << kLabelIndent << "sizes        " << (options.unicode ? "≈" : "~")
      << Count(story.allocations) << " allocations, " << Bytes(bytes)
      << " (of allocations / of bytes):";
  const char* separator = " ";
  for (const analysis::SizeBucket& b : story.sizes) {
    const double objects = Percent(b.objects, story.allocations),
                 of_bytes = Percent(b.bytes, bytes);
    if (objects < 0.5 && of_bytes < 0.5) continue;  // both would read 0%
    out << separator << BucketName(b, options.unicode) << " " << FormatFixed(objects, 0) << "%/"
        << FormatFixed(of_bytes, 0) << "%";
    separator = ", ";
  }
  out << "\n";
}

}  // namespace

std::string Sparkline(const std::vector<double>& values, size_t width, bool unicode) {
  if (values.empty() || width == 0) return "";
  const size_t columns = std::min(width, values.size());
  std::vector<double> highest(columns, 0);
  for (size_t i = 0; i < values.size(); ++i) {
    const size_t column = i * columns / values.size();
    highest[column] = std::max(highest[column], values[i]);
  }
  const double top = std::max(1.0, *std::max_element(highest.begin(), highest.end()));
  static const char* const kBlocks[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  static const char kAscii[] = "_.-:=+*#";
  std::string line;
  for (double value : highest) {
    const int level =
        std::min(7, static_cast<int>(std::floor(std::clamp(value / top, 0.0, 1.0) * 8)));
    if (unicode) {
      line += kBlocks[level];
    } else {
      line += kAscii[level];
    }
  }
  return line;
}

std::string Sparkline(const analysis::Timeline& timeline, size_t width, bool unicode) {
  std::vector<double> heap;
  for (const analysis::TimelinePoint& p : timeline.points) {
    heap.push_back(static_cast<double>(std::max(p.max, p.live)));
  }
  // The last point's maximum still holds the peak when the heap fell after the point before (a
  // program that tears down at exit): the heap as it ended is one more column.
  if (!timeline.points.empty()) heap.push_back(static_cast<double>(timeline.points.back().live));
  return Sparkline(heap, width, unicode);
}

void PrintRunStory(const RunStory& story, const SummaryOptions& options, std::ostream& out) {
  out << "Summary";
  if (story.pid) out << " of pid " << *story.pid;
  if (story.sampled) {
    // Per byte for native profiles; a Ruby profile samples objects, 1 in `period`.
    if (story.header.per_object) {
      out << " (sampled 1 in " << Count(story.header.period) << " objects";
      if (story.header.native_byte_interval > 0) {
        out << ", native bytes every "
            << FormatValue(story.header.native_byte_interval, schema::kBytesUnit);
      }
    } else {
      out << " (sampled every " << FormatValue(story.header.period, schema::kBytesUnit);
    }
    out << (options.unicode ? "; ±" : "; +-") << " is a 95% interval)";
  } else {
    out << " (exact)";
  }
  out << ":\n";
  PrintAttached(story, out);
  PrintTimeline(story, options, out);
  PrintNeverFreed(story, options, out);
  PrintFreed(story, options, out);
  PrintRss(story, options, out);
  PrintTemporaries(story, options, out);
  PrintAllocated(story, options, out);
  PrintSizes(story, options, out);
}

}  // namespace heaprec::render
