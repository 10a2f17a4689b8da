#include "analysis/run_story.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "analysis/diff.h"
#include "analysis/profile_view.h"
#include "analysis/report.h"
#include "schema/profile_schema.h"

namespace heaprec::analysis {
namespace {

using profile::Profile;
using profile::Sample;

double Error95(double variance) { return std::isfinite(variance) ? 1.96 * std::sqrt(variance) : 0; }

bool HasSampleType(const Profile& p, const std::string& type) {
  return std::any_of(p.sample_types.begin(), p.sample_types.end(),
                     [&type](const profile::ValueType& t) { return t.type == type; });
}

// The sites of a report, by flat value: the ones that allocated.
StoryRanking RankSites(const Report& report, size_t top) {
  StoryRanking ranking;
  ranking.total = report.total;
  ranking.error = report.sampled ? Error95(report.total_variance) : 0;
  for (const ReportRow& row : report.rows) {
    if (row.flat <= 0 || row.context) continue;
    ++ranking.sites;
    if (ranking.top.size() < top) {
      ranking.top.push_back(
          {row.Label(), row.flat, report.sampled ? Error95(row.flat_variance) : 0});
    }
  }
  return ranking;
}

// What was held at the peak and no longer at the exit, per site: the sites whose flat value fell.
StoryRanking RankFreed(const Profile& peak, const Profile& final_profile, size_t top) {
  const Diff diff = ComputeDiff(peak, final_profile, schema::kInuseSpace);
  StoryRanking ranking;
  double squared_noise = 0;
  // The sum of the sites' drops, not the change of the total, which nets out what grew meanwhile.
  // Only what is larger than the sampling noise: a site whose estimate merely wobbled between
  // the two profiles freed nothing.
  for (const DiffFunction& f : diff.by_flat) {
    if (f.flat.change() >= 0 || f.row.context) continue;
    if (f.flat.significance() != Significance::kSignificant) continue;
    const double noise = diff.sampled && std::isfinite(f.flat.noise()) ? f.flat.noise() : 0;
    ++ranking.sites;
    ranking.total -= f.flat.change();
    squared_noise += noise * noise;
    if (ranking.top.size() < top) ranking.top.push_back({f.row.Label(), -f.flat.change(), noise});
  }
  ranking.error = std::sqrt(squared_noise);  // the sites' estimates are independent
  return ranking;
}

// The temporary_objects label (the preload library's count of sampled objects freed before their
// thread allocated anything else, weighted) as the one value of a copy of the profile, ranked by
// site as any report is.
StoryRanking RankTemporaries(const Profile& p, size_t top) {
  Profile temporaries = p;
  temporaries.sample_types = {{schema::kTemporaryLabel, schema::kCountUnit}};
  temporaries.default_sample_type.clear();
  temporaries.samples.clear();
  for (const Sample& sample : p.samples) {
    const int64_t count = NumericLabel(sample, schema::kTemporaryLabel);
    if (count <= 0) continue;
    Sample only = sample;
    only.values = {count};
    temporaries.samples.push_back(std::move(only));
  }
  if (temporaries.samples.empty()) return {};
  return RankSites(ComputeReport(temporaries, schema::kTemporaryLabel), top);
}

// Allocations by size, from each sample's object size (the `bytes` label) and its alloc_ values.
std::vector<SizeBucket> SizeHistogram(const Profile& p, int64_t* allocations) {
  const size_t objects = SelectSampleIndex(p, schema::kAllocObjects);
  const size_t space = SelectSampleIndex(p, schema::kAllocSpace);
  constexpr int kBuckets = 10;  // <=16 B, <=64 B, ... <=4 MiB, larger
  std::vector<SizeBucket> buckets(kBuckets);
  for (int i = 0; i < kBuckets; ++i) {
    buckets[i].low = i == 0 ? 0 : (uint64_t{16} << (2 * (i - 1))) + 1;
    buckets[i].high = i == kBuckets - 1 ? UINT64_MAX : uint64_t{16} << (2 * i);
  }
  for (const Sample& sample : p.samples) {
    const int64_t size = NumericLabel(sample, schema::kBytesLabel);
    if (size <= 0 || objects >= sample.values.size() || space >= sample.values.size()) continue;
    auto bucket = std::find_if(buckets.begin(), buckets.end(), [size](const SizeBucket& b) {
      return static_cast<uint64_t>(size) <= b.high;
    });
    bucket->objects += sample.values[objects];
    bucket->bytes += sample.values[space];
    *allocations += sample.values[objects];
  }
  std::erase_if(buckets, [](const SizeBucket& b) { return b.objects <= 0; });
  return buckets;
}

RssAccount AccountRss(const Profile& p, const StoryRanking& live,
                      const std::optional<AttachFacts>& attach) {
  RssAccount rss;
  rss.rss = NumericCommentField(p, schema::kRssField);
  rss.file_backed = NumericCommentField(p, schema::kRssFileField);
  rss.malloc_in_use = NumericCommentField(p, schema::kMallocInUseField);
  rss.malloc_free = NumericCommentField(p, schema::kMallocFreeField);
  rss.profiler = NumericCommentField(p, schema::kProfilerBytesField);
  rss.heap = live.total;
  rss.heap_error = live.error;
  if (attach) {
    rss.attached = true;
    rss.before_attach = attach->unattributed;
  }
  return rss;
}

}  // namespace

int64_t RssAccount::overhead() const {
  if (malloc_in_use < 0 || heap < 0) return -1;
  return std::max<int64_t>(0, malloc_in_use - heap - std::max<int64_t>(0, before_attach));
}

namespace {

// rss minus the parts other than malloc's free memory.
int64_t RssBesidesMallocFree(const RssAccount& r) {
  int64_t left = r.rss;
  for (int64_t part : {r.file_backed, r.malloc_in_use < 0 ? r.heap : r.malloc_in_use, r.profiler}) {
    if (part > 0) left -= part;
  }
  return std::max<int64_t>(0, left);
}

}  // namespace

int64_t RssAccount::malloc_free_resident() const {
  if (rss < 0 || malloc_free < 0) return malloc_free;
  return std::min(malloc_free, RssBesidesMallocFree(*this));
}

int64_t RssAccount::rest() const {
  if (rss < 0) return -1;
  return RssBesidesMallocFree(*this) - std::max<int64_t>(0, malloc_free_resident());
}

RunStory ComputeRunStory(const Profile& final_profile, const Profile* peak_profile, size_t top) {
  RunStory story;
  story.header = HeaderOf(final_profile);
  story.timeline = story.header.timeline;
  story.pid = ProfilePid(final_profile);
  story.reason = CommentField(final_profile, schema::kReasonField).value_or("");
  if (!HasSampleType(final_profile, schema::kInuseSpace)) return story;

  const Report live = ComputeReport(final_profile, schema::kInuseSpace);
  story.sampled = live.sampled;
  story.never_freed = RankSites(live, top);
  story.peak = live.total;
  story.peak_error = story.never_freed.error;
  if (peak_profile != nullptr && HasSampleType(*peak_profile, schema::kInuseSpace)) {
    story.peak_known = true;
    const Report peak = ComputeReport(*peak_profile, schema::kInuseSpace);
    if (peak.total > story.peak) {
      story.peak = peak.total;
      story.peak_error = peak.sampled ? Error95(peak.total_variance) : 0;
    }
    story.freed_before_exit = RankFreed(*peak_profile, final_profile, top);
  }
  // The timeline sees every sampled allocation, not only the moments a profile was written.
  if (story.timeline) story.peak_known = true;
  if (story.timeline && story.timeline->peak >= story.peak) {
    story.peak = story.timeline->peak;
    story.peak_error = story.timeline->Error(story.peak);
    story.peak_ms = story.timeline->peak_ms;
  }
  story.rss = AccountRss(final_profile, story.never_freed, story.header.attach);
  story.temporaries = RankTemporaries(final_profile, top);
  if (HasSampleType(final_profile, schema::kAllocObjects) &&
      HasSampleType(final_profile, schema::kAllocSpace)) {
    story.sizes = SizeHistogram(final_profile, &story.allocations);
  } else if (HasSampleType(final_profile, schema::kAllocObjects) && story.temporaries.sites == 0) {
    story.allocated = RankSites(ComputeReport(final_profile, schema::kAllocObjects), top);
  }
  return story;
}

}  // namespace heaprec::analysis
