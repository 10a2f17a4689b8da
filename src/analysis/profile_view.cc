#include "analysis/profile_view.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <utility>

#include "analysis/short_name.h"
#include "schema/profile_schema.h"

namespace heaprec::analysis {
namespace {
const std::string kNoLibrary;  // the library of a location in no known mapping
}  // namespace

using profile::Function;
using profile::Label;
using profile::Line;
using profile::Location;
using profile::Mapping;
using profile::Profile;
using profile::Sample;
using profile::ValueType;

std::string HexAddress(uint64_t value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "0x%" PRIx64, value);
  return buffer;
}

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string FrameId::DisplayName() const {
  if (symbolized() || mapping.empty()) return function;
  return function + " (" + mapping + ")";
}

std::string FrameId::Label() const {
  if (!symbolized() || file.empty()) return DisplayName();
  std::string label = function + " " + BaseName(file);
  if (line > 0) label += ":" + std::to_string(line);
  return label;
}

size_t SelectSampleIndex(const Profile& p, const std::string& requested) {
  const std::string& wanted = requested.empty() ? p.default_sample_type : requested;
  for (size_t i = 0; i < p.sample_types.size(); ++i) {
    if (p.sample_types[i].type == wanted) return i;
  }
  if (requested.empty() && !p.sample_types.empty()) return p.sample_types.size() - 1;
  std::string known;
  for (const ValueType& vt : p.sample_types) known += (known.empty() ? "" : ", ") + vt.type;
  throw UnknownSampleIndexError("unknown sample index '" + wanted +
                                "'; this profile has: " + (known.empty() ? "none" : known));
}

bool IsHeapSampleType(const std::string& type) {
  return profile::IsByteCountType(type) || profile::IsObjectCountType(type);
}

std::optional<std::string> CommentField(const Profile& p, const std::string& name) {
  std::string prefix = name + "=";
  for (const std::string& comment : p.comments) {
    if (comment.rfind('#', 0) == 0) continue;  // data (the timeline), not NAME=VALUE fields
    size_t pos = 0;
    while (pos < comment.size()) {
      size_t end = comment.find(' ', pos);
      if (end == std::string::npos) end = comment.size();
      if (comment.compare(pos, prefix.size(), prefix) == 0) {
        return comment.substr(pos + prefix.size(), end - pos - prefix.size());
      }
      pos = end + 1;
    }
  }
  return std::nullopt;
}

int64_t NumericCommentField(const Profile& p, const std::string& name) {
  const std::optional<std::string> value = CommentField(p, name);
  if (!value || value->empty()) return -1;
  char* stop = nullptr;
  const long long number = std::strtoll(value->c_str(), &stop, 10);
  return *stop == '\0' && number >= 0 ? number : -1;
}

std::optional<int64_t> ProfilePid(const Profile& p) {
  std::optional<std::string> value = CommentField(p, schema::kPidField);
  if (!value || value->empty()) return std::nullopt;
  char* stop = nullptr;
  long long pid = std::strtoll(value->c_str(), &stop, 10);
  if (stop == nullptr || *stop != '\0') return std::nullopt;
  return pid;
}

bool IsPeakProfile(const Profile& p) {
  return CommentField(p, schema::kReasonField) == schema::kReasonPeak;
}

bool IsFinalProfile(const Profile& p) {
  std::optional<std::string> reason = CommentField(p, schema::kReasonField);
  return reason.has_value() && schema::IsFinalReason(*reason);
}

int PairedSampleType(const std::vector<ValueType>& types, size_t index) {
  if (index >= types.size()) return -1;
  const std::string& type = types[index].type;
  auto swap_suffix = [&](const std::string& from, const std::string& to) -> int {
    if (type.size() <= from.size() || type.compare(type.size() - from.size(), from.size(), from)) {
      return -1;
    }
    std::string paired = type.substr(0, type.size() - from.size()) + to;
    for (size_t i = 0; i < types.size(); ++i) {
      if (types[i].type == paired) return static_cast<int>(i);
    }
    return -1;
  };
  const std::string space = std::string("_") + schema::kSpaceSuffix;
  const std::string objects = std::string("_") + schema::kObjectsSuffix;
  int pair = swap_suffix(space, objects);
  return pair >= 0 ? pair : swap_suffix(objects, space);
}

int64_t NumericLabel(const Sample& s, const std::string& key) {
  for (const Label& label : s.labels) {
    if (label.key == key && label.str.empty()) return label.num;
  }
  return -1;
}

const std::string* StringLabel(const Sample& s, const std::string& key) {
  for (const Label& label : s.labels) {
    if (label.key == key && !label.str.empty()) return &label.str;
  }
  return nullptr;
}

void LineTally::Add(int64_t line, int64_t weight) {
  if (line <= 0) return;
  int64_t magnitude = weight < 0 ? -weight : weight;
  for (auto& [known, total] : lines_) {
    if (known == line) {
      total += magnitude;
      return;
    }
  }
  lines_.emplace_back(line, magnitude);
}

int64_t LineTally::Heaviest(int64_t fallback) const {
  int64_t best = fallback;
  int64_t best_total = -1;
  for (const auto& [line, total] : lines_) {
    if (total > best_total || (total == best_total && line < best)) {
      best = line;
      best_total = total;
    }
  }
  return best;
}

ProfileView::ProfileView(const Profile& p, const ViewOptions& options) : profile_(p), sampling_(p) {
  // Names and the site rule's answer are worked out once per Function entry (and mapping), not per
  // location: demangled names are long, and the rule is a regular expression.
  struct NamedFunction {
    const Function* function = nullptr;
    std::string name;        // as the profile names it
    std::string short_name;  // what the site rule reads, whichever is shown: a full name can start
                             // with its return type ("void std::vector<int>::_M_realloc_insert")
  };
  std::unordered_map<uint64_t, NamedFunction> functions;
  for (const Function& f : p.functions) {
    NamedFunction& named = functions[f.id];
    named.function = &f;
    named.name = !f.name.empty() ? f.name : f.system_name;
    named.short_name = IsMangledName(f.system_name) ? ShortName(named.name) : named.name;
  }
  std::unordered_map<uint64_t, std::string> libraries;  // mapping id -> its file's base name
  for (const Mapping& m : p.mappings) libraries[m.id] = BaseName(m.filename);
  std::map<std::pair<uint64_t, uint64_t>, bool> skipped;  // (function id, mapping id) -> the rule's
  // Per function: whether its line is to be found from the locations (no start line).
  std::vector<bool> line_from_locations;
  for (const Location& loc : p.locations) {
    std::vector<LocationFrame>& frames = frames_[loc.id];
    auto lit = libraries.find(loc.mapping_id);
    const std::string& library = lit == libraries.end() ? kNoLibrary : lit->second;
    for (size_t i = 0; i < loc.lines.size(); ++i) {
      const Line& line = loc.lines[i];
      auto it = functions.find(line.function_id);
      if (it == functions.end()) continue;
      const NamedFunction& named = it->second;
      const Function& f = *named.function;
      FrameId id;
      id.function = named.name.empty()   ? HexAddress(loc.address)
                    : options.full_names ? named.name
                                         : named.short_name;
      id.file = f.filename;
      id.line = options.lines ? line.line : f.start_line;
      id.key = "f:" + id.function + '\0' + id.file;
      if (options.lines) id.key += '\0' + std::to_string(line.line);
      auto [rule, first] = skipped.try_emplace({f.id, loc.mapping_id});
      if (first) {
        // Ruby's methods written in C are the frames without a source file of a per-object
        // profile; the native frames below them (its native byte samples') count as theirs. The
        // front end's markers ("(garbage collector)": a native sample without a Ruby stack) are
        // what a user should see as the site.
        bool marker = named.short_name.size() > 1 && named.short_name.front() == '(' &&
                      named.short_name.back() == ')';
        bool ruby_c_method =
            sampling_.per_object && (f.filename.empty() || loc.mapping_id != 0) && !marker;
        rule->second = options.sites.Skips(named.short_name, library, ruby_c_method);
      }
      id.runtime = rule->second;
      size_t before = functions_.size();
      size_t n = Intern(std::move(id));
      if (n == before) line_from_locations.push_back(!options.lines && functions_[n].line <= 0);
      // A Ruby function has no start line, only the lines its frames were at: the smallest one
      // points the reader at the function as a start line would.
      if (line_from_locations[n] && line.line > 0) {
        int64_t& shown = functions_[n].line;
        shown = shown == 0 ? line.line : std::min(shown, line.line);
      }
      frames.push_back({.function = n, .line = line.line, .inlined = i + 1 < loc.lines.size()});
    }
    if (frames.empty()) {
      // Unsymbolized: one function per address, as pprof shows them.
      FrameId id;
      id.function = id.address = HexAddress(loc.address);
      id.mapping = library;
      id.key = "a:" + id.mapping + '\0' + id.address;
      auto [rule, first] = skipped.try_emplace({0, loc.mapping_id});
      if (first) rule->second = options.sites.Skips("", library, sampling_.per_object);
      id.runtime = rule->second;
      size_t before = functions_.size();
      size_t n = Intern(std::move(id));
      if (n == before) line_from_locations.push_back(false);
      frames.push_back({.function = n});
    }
  }
}

size_t ProfileView::Intern(FrameId id) {
  auto [it, inserted] = function_index_.try_emplace(id.key, functions_.size());
  if (inserted) functions_.push_back(std::move(id));
  return it->second;
}

bool ProfileView::IsEstimate(size_t index) const {
  return sampling_.sampled() && index < profile_.sample_types.size() &&
         IsHeapSampleType(profile_.sample_types[index].type);
}

std::span<const LocationFrame> ProfileView::Frames(uint64_t location_id) const {
  auto it = frames_.find(location_id);
  if (it == frames_.end()) return {};
  return it->second;
}

void ProfileView::SiteStack(const Sample& s, std::vector<LocationFrame>& stack) const {
  stack.clear();
  for (uint64_t location_id : s.location_ids) {
    std::span<const LocationFrame> frames = Frames(location_id);
    stack.insert(stack.end(), frames.begin(), frames.end());
  }
  auto site = std::find_if(stack.begin(), stack.end(), [&](const LocationFrame& frame) {
    return !functions_[frame.function].runtime;
  });
  if (site != stack.end()) stack.erase(stack.begin(), site);
}

int64_t ProfileView::ObjectSize(const Sample& s, size_t index) const {
  int64_t size = NumericLabel(s, schema::kBytesLabel);
  if (size >= 0) return size;
  const std::vector<ValueType>& types = profile_.sample_types;
  bool alloc = index < types.size() && types[index].type.rfind(schema::kAllocPrefix, 0) == 0;
  const char* families[] = {alloc ? schema::kAllocPrefix : schema::kInusePrefix,
                            alloc ? schema::kInusePrefix : schema::kAllocPrefix};
  for (const char* prefix : families) {
    size_t space = SIZE_MAX, objects = SIZE_MAX;
    for (size_t t = 0; t < types.size(); ++t) {
      if (types[t].type == std::string(prefix) + schema::kSpaceSuffix) space = t;
      if (types[t].type == std::string(prefix) + schema::kObjectsSuffix) objects = t;
    }
    if (space < s.values.size() && objects < s.values.size() && s.values[objects] != 0) {
      return std::llround(static_cast<double>(s.values[space]) /
                          static_cast<double>(s.values[objects]));
    }
  }
  return -1;
}

double ProfileView::Variance(const Sample& s, size_t index) const {
  if (index >= s.values.size() || index >= profile_.sample_types.size()) return 0.0;
  int64_t value = s.values[index];
  if (value == 0) return 0.0;
  const std::string& type = profile_.sample_types[index].type;
  int64_t size = ObjectSize(s, index);
  // A Ruby profile's native blocks were sampled by bytes, at the interval their label gives.
  profile::SamplingModel model = sampling_;
  if (int64_t interval = NumericLabel(s, schema::kByteIntervalLabel); interval > 0) {
    model = profile::SamplingModel(interval, /*objects=*/false);
  }
  // Sampled per object, a count's variance does not depend on the size.
  bool needs_size = !(model.per_object && profile::IsObjectCountType(type));
  if (size < 0 && needs_size && IsEstimate(index)) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return profile::ValueVariance(type, value, size, model);
}

double ProfileView::KnownVariance(const Sample& s, size_t index) const {
  double variance = Variance(s, index);
  return std::isfinite(variance) ? variance : 0.0;
}

}  // namespace heaprec::analysis
