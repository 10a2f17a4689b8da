// The "top functions" report of a heap profile, shared by `heaprec report` and by `heaprec run`
// (which prints the top 10 when the program exits), and the per-function and per-stack aggregation
// that `heaprec diff` compares. Mirrors `pprof -top`: flat counts a sample for its leaf function
// only, cum for every function on its stack (once per sample).
//
// Sampled profiles (period > 1) carry a 95% interval with every value: each pprof sample's variance
// comes from profile/sampling_error.h (under the profile's own sampling model: per byte for native
// profiles, per object for Ruby's), and a row adds the variances of the samples it counts
// (flat: the samples whose leaf is the function; cum: the samples with the function anywhere on
// the stack, each once). The samples are disjoint groups of independently sampled objects, so the
// variances add exactly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "profile/profile.h"

namespace heaprec::cli {

enum class ReportFormat { kText, kJson };

struct ReportOptions {
  std::string source;        // the profile's file name, shown in the header; "" to omit
  std::string sample_index;  // "" = the profile's default_sample_type, else its last type
  size_t top = 20;           // rows to print; 0 = all
  ReportFormat format = ReportFormat::kText;
};

// The requested sample index is not in the profile. what() lists the ones it has.
class UnknownSampleIndexError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct ReportRow {
  std::string key;       // identifies the function (or unsymbolized address) across profiles
  std::string function;  // demangled name, or the hex address for an unsymbolized location
  std::string file;      // function's source file ("" if unknown)
  // The function's start line; when the profile gives none (Ruby frames carry only the lines
  // being executed), the smallest line of the function that the profile's locations name. 0 if
  // unknown.
  int64_t line = 0;
  std::string address;  // hex address, only for an unsymbolized location
  std::string mapping;  // base name of its mapping's file, only for an unsymbolized location
  int64_t flat = 0;
  int64_t cum = 0;
  // Estimated variances of flat and cum: 0 in exact mode, NaN when a counted sample's object size
  // is unknown. A sample's object size is its `bytes` label or, without one, space / objects of
  // its matching pair (inuse_space / inuse_objects for inuse_*, alloc_* for alloc_*).
  double flat_variance = 0;
  double cum_variance = 0;
};

// One distinct call stack (as a sequence of rows, so inlined frames are expanded and samples that
// differ only in addresses or object sizes are merged).
struct ReportStack {
  std::vector<size_t> frames;  // indexes into Report::rows, leaf first
  int64_t value = 0;
  double variance = 0;
};

// The part of the total held by objects of one class: the samples whose string label `class` (set
// by the Ruby front end) has that value.
struct ReportClass {
  std::string name;
  int64_t value = 0;
  double variance = 0;
};

struct Report {
  ValueType sample_type;
  // Whether the values are sampling estimates with intervals: the profile is sampled (period > 1)
  // and the sample type is one heaprec samples (inuse_/alloc_ space/objects). False in exact mode.
  bool sampled = false;
  int64_t total = 0;
  double total_variance = 0;
  size_t samples = 0;
  std::vector<ReportRow> rows;      // all rows, by decreasing |flat|, then |cum|, then name
  std::vector<ReportStack> stacks;  // only when asked for: by decreasing |value|, then frames
  // By decreasing |value|, then name; empty when no sample has a `class` label (native profiles).
  // Samples without one count under "(unknown)".
  std::vector<ReportClass> classes;
};

// The index of the requested sample type ("" = the profile's default_sample_type, else its last
// type, as pprof does). Throws UnknownSampleIndexError listing the types the profile has.
size_t SelectSampleIndex(const Profile& profile, const std::string& requested);

// Throws UnknownSampleIndexError. `with_stacks` also fills Report::stacks.
Report ComputeReport(const Profile& profile, const std::string& sample_index,
                     bool with_stacks = false);

// A row label as the text report shows it: "name file.cc:LINE", or "0xADDR (mapping)".
std::string RowLabel(const ReportRow& row);

// Pads `s` on the left to `width` terminal columns (UTF-8 aware: "±" is one column).
std::string PadLeft(const std::string& s, size_t width);

// How a per-object profile was sampled, in words: "1 in 1000 objects", or "every object (exact)"
// at period 1.
std::string FormatObjectSampling(int64_t period);

// Formats a value in `unit`: bytes as B/KiB/MiB/GiB (one decimal above B), others as integers.
std::string FormatValue(int64_t value, const std::string& unit);

// The half-width of a 95% interval, 1.96·sqrt(variance), as "±1.1 MiB" ("±?" when unknown).
std::string FormatMargin(double variance, const std::string& unit);

// Prints the header and the top rows. Throws UnknownSampleIndexError before printing anything.
void PrintReport(const Profile& profile, const ReportOptions& options, std::ostream& out);

}  // namespace heaprec::cli
