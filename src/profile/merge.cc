#include "profile/merge.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string_view>
#include <unordered_map>

#include "schema/profile_schema.h"

namespace heaprec::profile {
namespace {

std::string NameOf(const std::vector<std::string>& names, size_t i) {
  return i < names.size() ? names[i] : "profile #" + std::to_string(i + 1);
}

std::string DescribeTypes(const std::vector<ValueType>& types) {
  std::string text;
  for (const ValueType& t : types) text += (text.empty() ? "" : ", ") + t.type + "/" + t.unit;
  return text.empty() ? "none" : text;
}

std::string DescribeSampling(const Profile& p) {
  if (p.period <= 1) return "exact";
  return "sampled every " + std::to_string(p.period) + " " +
         (p.period_type.unit.empty() ? p.period_type.type : p.period_type.unit);
}

// Appends `value` with its length, so that no two different sequences give the same key.
void AppendField(std::string& key, std::string_view value) {
  key += std::to_string(value.size());
  key += ':';
  key += value;
}

// The NAME=VALUE fields of a profile's comments, in order. '#' comments (a process's timeline) are
// not fields: they describe one process, never the whole.
std::vector<std::string> CommentFields(const Profile& p) {
  std::vector<std::string> fields;
  for (const std::string& comment : p.comments) {
    if (comment.starts_with('#')) continue;
    size_t pos = 0;
    while (pos <= comment.size()) {
      size_t end = std::min(comment.find(' ', pos), comment.size());
      if (end > pos) fields.push_back(comment.substr(pos, end - pos));
      pos = end + 1;
    }
  }
  return fields;
}

// The fields every profile has with the same value, after "merged=N": what still describes the
// whole (the sampling interval, the program) and not one process (its pid, its reason).
std::vector<std::string> MergedComments(const std::vector<Profile>& profiles) {
  std::vector<std::string> common = CommentFields(profiles.front());
  for (size_t i = 1; i < profiles.size() && !common.empty(); ++i) {
    std::vector<std::string> fields = CommentFields(profiles[i]);
    std::erase_if(common, [&](const std::string& field) {
      return std::find(fields.begin(), fields.end(), field) == fields.end();
    });
  }
  std::string line = std::string(schema::kMergedField) + "=" + std::to_string(profiles.size());
  for (const std::string& field : common) line += " " + field;
  return {line};
}

// Builds the merged profile's tables, each entry once by its identity key.
class Merger {
 public:
  explicit Merger(Profile& out) : out_(out) {}

  // Adds `in`'s samples to the merged profile.
  void Add(const Profile& in) {
    std::unordered_map<uint64_t, const Mapping*> mappings;
    for (const Mapping& m : in.mappings) mappings[m.id] = &m;
    std::unordered_map<uint64_t, const Function*> functions;
    for (const Function& f : in.functions) functions[f.id] = &f;
    std::unordered_map<uint64_t, uint64_t> locations;  // in's id -> merged id
    for (const Location& loc : in.locations) {
      auto m = mappings.find(loc.mapping_id);
      locations[loc.id] = AddLocation(loc, m == mappings.end() ? nullptr : m->second, functions);
    }
    for (const Sample& s : in.samples) {
      Sample merged = s;
      for (uint64_t& id : merged.location_ids) {
        auto it = locations.find(id);
        id = it == locations.end() ? 0 : it->second;
      }
      std::string key = SampleKey(merged);
      auto [it, inserted] = samples_.try_emplace(std::move(key), out_.samples.size());
      if (inserted) {
        out_.samples.push_back(std::move(merged));
        continue;
      }
      std::vector<int64_t>& values = out_.samples[it->second].values;
      for (size_t i = 0; i < values.size() && i < s.values.size(); ++i) values[i] += s.values[i];
    }
  }

 private:
  uint64_t AddMapping(const Mapping& m) {
    std::string key;
    for (std::string_view part : {std::string_view(m.filename), std::string_view(m.build_id)}) {
      AppendField(key, part);
    }
    for (uint64_t v : {m.memory_start, m.memory_limit, m.file_offset}) {
      AppendField(key, std::to_string(v));
    }
    auto [it, inserted] = mappings_.try_emplace(key, out_.mappings.size() + 1);
    if (inserted) {
      out_.mappings.push_back(m);
      out_.mappings.back().id = it->second;
    } else {
      Mapping& kept = out_.mappings[it->second - 1];
      kept.has_functions = kept.has_functions || m.has_functions;
      kept.has_filenames = kept.has_filenames || m.has_filenames;
      kept.has_line_numbers = kept.has_line_numbers || m.has_line_numbers;
      kept.has_inline_frames = kept.has_inline_frames || m.has_inline_frames;
    }
    return it->second;
  }

  uint64_t AddFunction(const Function& f) {
    std::string key;
    for (std::string_view part : {std::string_view(f.name), std::string_view(f.system_name),
                                  std::string_view(f.filename)}) {
      AppendField(key, part);
    }
    AppendField(key, std::to_string(f.start_line));
    auto [it, inserted] = functions_.try_emplace(key, out_.functions.size() + 1);
    if (inserted) {
      out_.functions.push_back(f);
      out_.functions.back().id = it->second;
    }
    return it->second;
  }

  uint64_t AddLocation(const Location& loc, const Mapping* mapping,
                       const std::unordered_map<uint64_t, const Function*>& functions) {
    // A symbolized location is its lines (wherever the code was loaded); an unsymbolized one its
    // address as an offset in the mapped file.
    std::string key;
    if (mapping != nullptr) {
      AppendField(key, mapping->filename);
      AppendField(key, mapping->build_id);
    }
    Location merged = loc;
    merged.mapping_id = mapping != nullptr ? AddMapping(*mapping) : 0;
    for (Line& line : merged.lines) {
      auto f = functions.find(line.function_id);
      line.function_id = f == functions.end() ? 0 : AddFunction(*f->second);
      AppendField(key, std::to_string(line.function_id) + "@" + std::to_string(line.line));
    }
    if (merged.lines.empty()) {
      uint64_t offset = loc.address;
      if (mapping != nullptr) offset = loc.address - mapping->memory_start + mapping->file_offset;
      AppendField(key, "0x" + std::to_string(offset));
    }
    AppendField(key, loc.is_folded ? "folded" : "");
    auto [it, inserted] = locations_.try_emplace(key, out_.locations.size() + 1);
    if (inserted) {
      merged.id = it->second;
      out_.locations.push_back(std::move(merged));
    }
    return it->second;
  }

  static std::string SampleKey(const Sample& s) {
    std::string key;
    for (uint64_t id : s.location_ids) AppendField(key, std::to_string(id));
    key += '|';
    for (const Label& l : s.labels) {
      AppendField(key, l.key);
      AppendField(key, l.str);
      AppendField(key, std::to_string(l.num));
      AppendField(key, l.num_unit);
    }
    return key;
  }

  Profile& out_;
  std::unordered_map<std::string, uint64_t> mappings_;
  std::unordered_map<std::string, uint64_t> functions_;
  std::unordered_map<std::string, uint64_t> locations_;
  std::unordered_map<std::string, size_t> samples_;  // -> index in out_.samples
};

}  // namespace

void CheckMergeable(const std::vector<Profile>& profiles, const std::vector<std::string>& names) {
  for (size_t i = 1; i < profiles.size(); ++i) {
    const Profile& first = profiles.front();
    const Profile& p = profiles[i];
    const std::string both = NameOf(names, 0) + " and " + NameOf(names, i);
    if (p.sample_types != first.sample_types) {
      throw ProfileError("cannot merge " + both + ": their sample types differ (" +
                         DescribeTypes(first.sample_types) + " vs " +
                         DescribeTypes(p.sample_types) + ")");
    }
    if (p.period_type != first.period_type ||
        std::max<int64_t>(p.period, 1) != std::max<int64_t>(first.period, 1)) {
      // One interval per profile is all the error model knows (docs/design/merge.md).
      throw ProfileError("cannot merge " + both + ": they were sampled differently (" +
                         DescribeSampling(first) + " vs " + DescribeSampling(p) +
                         "); the merged error bars need one sampling interval");
    }
  }
}

Profile MergeProfiles(std::vector<Profile> profiles, const std::vector<std::string>& names) {
  if (profiles.empty()) throw ProfileError("no profiles to merge");
  if (profiles.size() == 1) return std::move(profiles.front());
  CheckMergeable(profiles, names);
  const Profile& first = profiles.front();
  Profile out;
  out.sample_types = first.sample_types;
  out.period_type = first.period_type;
  out.period = first.period;
  out.drop_frames = first.drop_frames;
  out.keep_frames = first.keep_frames;
  out.default_sample_type = first.default_sample_type;
  out.comments = MergedComments(profiles);
  int64_t start = std::numeric_limits<int64_t>::max();
  int64_t end = 0;
  Merger merger(out);
  for (const Profile& p : profiles) {
    if (p.time_nanos > 0) {
      start = std::min(start, p.time_nanos);
      end = std::max(end, p.time_nanos + p.duration_nanos);
    }
    merger.Add(p);
  }
  if (end > 0) {
    out.time_nanos = start;
    out.duration_nanos = end - start;
  }
  return out;
}

}  // namespace heaprec::profile
