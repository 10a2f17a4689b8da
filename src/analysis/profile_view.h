// One view of a profile that every analysis shares: the frames of each location with their
// functions, files and lines; the object size behind each sample; which sample types pair up;
// the comment fields; and the sampling model the error bars come from. The report, the diff,
// the leak series and the flame graph are all computed on it, so that a function, a site and a
// node are the same thing in every output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/site_rule.h"
#include "profile/profile.h"
#include "profile/sampling_error.h"

namespace heaprec::analysis {

// "0x4011f0": how an unsymbolized address is named.
std::string HexAddress(uint64_t value);

// The last component of a path ("/usr/lib/libc.so.6" -> "libc.so.6").
std::string BaseName(const std::string& path);

// How a view names frames.
struct ViewOptions {
  // Which frames are not the user's code: a sample's stack starts at its allocation site, the
  // first frame from the leaf that the rule does not skip (site_rule.h). The rule reads each
  // function's short name, with full_names too, so that the sites do not depend on how names
  // are shown.
  SiteRule sites{};
  // Function names as demangled, with parameters and template arguments, instead of their
  // ShortName. Only mangled (C++, Rust) names have a short form.
  bool full_names = false;
  // One frame per source line of a function (pprof -lines) instead of one per function.
  bool lines = false;
};

// What a frame names: a function, by name and source file (duplicate Function entries, the
// inlined copies of one function and, with short names, its overloads and template instances are
// one), with ViewOptions::lines one of its lines, or for an unsymbolized location its address in
// its mapping, one per address as pprof shows them. The identity of report rows, diff entries,
// leak sites and flame nodes.
struct FrameId {
  // Identity across profiles: "f:" NAME '\0' FILE (with lines, '\0' LINE too), or
  // "a:" MAPPING '\0' ADDRESS.
  std::string key;
  // The demangled name, short or full (ViewOptions::full_names; the system name when there is
  // none, the address when there is neither); for an unsymbolized location, its hex address.
  std::string function;
  std::string file;  // the function's source file; "" if unknown
  // With ViewOptions::lines, the line. Else the function's start line; when the profile gives none
  // (Ruby frames carry only the lines being executed), the smallest line of the function that the
  // profile's locations name. 0 if unknown. The analyses show the line of the call that holds the
  // most instead (LineTally).
  int64_t line = 0;
  std::string address;  // the hex address, only for an unsymbolized location
  std::string mapping;  // base name of its mapping's file, only for an unsymbolized location
  // Not the user's code (ViewOptions::sites): skipped when a sample's site is chosen.
  bool runtime = false;

  bool symbolized() const { return address.empty(); }
  // The function's name, or "0xADDR (mapping)" ("0xADDR" outside any known mapping).
  std::string DisplayName() const;
  // As the text outputs show a frame: "name file.cc:LINE" (the file's base name, the line when
  // known), or DisplayName() for an unsymbolized address.
  std::string Label() const;
};

// One frame of a location.
struct LocationFrame {
  size_t function = 0;   // index into ProfileView::functions()
  int64_t line = 0;      // the line executing in that function (0 if unknown)
  bool inlined = false;  // inlined into the next frame outwards
};

// The lines one function (or site) was at across the samples that counted it, to show the line
// of the call that holds the most rather than the function's first line.
class LineTally {
 public:
  void Add(int64_t line, int64_t weight);  // weight: the sample's value; its magnitude counts
  // The line with the largest total weight (ties: the smaller line); `fallback` when none is known.
  int64_t Heaviest(int64_t fallback) const;

 private:
  std::vector<std::pair<int64_t, int64_t>> lines_;  // (line, total |weight|), few per function
};

// The requested sample index is not in the profile. what() lists the ones it has.
class UnknownSampleIndexError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The index of the requested sample type ("" = the profile's default_sample_type, else its last
// type, as pprof does). Throws UnknownSampleIndexError listing the types the profile has.
size_t SelectSampleIndex(const profile::Profile& profile, const std::string& requested);

// Whether `type` is one of the values heaprec samples (inuse_/alloc_ space/objects), the values
// profile/sampling_error.h models.
bool IsHeapSampleType(const std::string& type);

// The value of the comment field NAME=VALUE (a comment may hold several, separated by spaces).
std::optional<std::string> CommentField(const profile::Profile& profile, const std::string& name);

// The comment field NAME=N as a number; -1 when absent, empty or not a non-negative integer.
int64_t NumericCommentField(const profile::Profile& profile, const std::string& name);

// The writing process's pid (comment pid=N), if the profile names one.
std::optional<int64_t> ProfilePid(const profile::Profile& profile);

// Whether the profile was written at a peak of the live heap (comment reason=peak).
bool IsPeakProfile(const profile::Profile& profile);

// Whether the profile is a process's final one, written as it ended (comment reason=exit, _exit,
// crash or terminated).
bool IsFinalProfile(const profile::Profile& profile);

// The sample type paired with `types[index]` (inuse_space <-> inuse_objects, alloc_space <->
// alloc_objects), or -1.
int PairedSampleType(const std::vector<profile::ValueType>& types, size_t index);

// The numeric label `key` of a sample, or -1 if it has none.
int64_t NumericLabel(const profile::Sample& sample, const std::string& key);

// The string label `key` of a sample, or nullptr if it has none (or an empty one).
const std::string* StringLabel(const profile::Sample& sample, const std::string& key);

class ProfileView {
 public:
  // `profile` must outlive the view.
  explicit ProfileView(const profile::Profile& profile, const ViewOptions& options = {});

  const profile::Profile& profile() const { return profile_; }
  const profile::SamplingModel& sampling() const { return sampling_; }
  // Whether the profile's values of type `index` are sampling estimates (sampled profile, heaprec
  // sample type) rather than exact.
  bool IsEstimate(size_t index) const;

  const std::vector<FrameId>& functions() const { return functions_; }
  // The frames of a location, innermost (inlined) first, the function the code belongs to last;
  // empty for an unknown id.
  std::span<const LocationFrame> Frames(uint64_t location_id) const;
  // The frames of a sample's stack, leaf first, from its allocation site outwards: the frames
  // before the first one that is not FrameId::runtime are left out (none when every frame is).
  // Replaces the contents of `stack`, a buffer the caller reuses.
  void SiteStack(const profile::Sample& sample, std::vector<LocationFrame>& stack) const;

  // PairedSampleType of the profile's sample types.
  int PairedType(size_t index) const { return PairedSampleType(profile_.sample_types, index); }

  // The object size of a sample: its `bytes` label, else space / objects of the pair of type
  // `index`'s family, else of the other family; -1 if unknown.
  int64_t ObjectSize(const profile::Sample& sample, size_t index) const;

  // The variance of the sample's value of type `index` under the profile's sampling model: 0 for
  // exact values and for types heaprec does not sample, NaN when it depends on an object size
  // that is unknown.
  double Variance(const profile::Sample& sample, size_t index) const;
  // The same, 0 where it is unknown: for the models that cannot carry an unknown interval (a leak
  // series' fit, the flame page), where a sample of unknown size adds no sampling error.
  double KnownVariance(const profile::Sample& sample, size_t index) const;

 private:
  size_t Intern(FrameId id);

  const profile::Profile& profile_;
  profile::SamplingModel sampling_;
  std::vector<FrameId> functions_;
  std::unordered_map<std::string, size_t> function_index_;
  std::unordered_map<uint64_t, std::vector<LocationFrame>> frames_;
};

}  // namespace heaprec::analysis
