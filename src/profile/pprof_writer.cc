// pprof encoding with protozero. Strings are interned in a first walk over the model so that the
// message can then be written in field-number order, as pprof's own encoder does. Encoding is
// lossless: ReadProfile gives back an equal Profile for anything the reader can produce.
#include "profile/pprof_writer.h"

#include <protozero/pbf_writer.hpp>
#include <unordered_map>

#include "profile/gzip.h"
#include "schema/pprof_fields.h"

namespace heaprec::profile {
namespace {

using protozero::pbf_writer;

class StringTable {
 public:
  StringTable() { Intern(""); }
  // Starts as `strings` (whose entry 0 is ""), every entry at the index it had, duplicates too, so
  // that encoded messages that index it stay right.
  explicit StringTable(const std::vector<std::string>& strings) {
    for (const std::string& s : strings) {
      auto it = index_.try_emplace(s, static_cast<int64_t>(strings_.size())).first;
      strings_.push_back(&it->first);
    }
  }

  int64_t Intern(const std::string& s) {
    auto [it, inserted] = index_.try_emplace(s, static_cast<int64_t>(strings_.size()));
    if (inserted) strings_.push_back(&it->first);
    return it->second;
  }

  // Only valid for strings already interned.
  int64_t Index(const std::string& s) const { return index_.at(s); }

  const std::vector<const std::string*>& strings() const { return strings_; }

 private:
  // Node-based map: the pointers in strings_ stay valid as it grows.
  std::unordered_map<std::string, int64_t> index_;
  std::vector<const std::string*> strings_;
};

void InternAll(const Profile& p, StringTable& st) {
  for (const ValueType& vt : p.sample_types) {
    st.Intern(vt.type);
    st.Intern(vt.unit);
  }
  for (const Sample& s : p.samples) {
    for (const Label& l : s.labels) {
      st.Intern(l.key);
      st.Intern(l.str);
      st.Intern(l.num_unit);
    }
  }
  for (const Mapping& m : p.mappings) {
    st.Intern(m.filename);
    st.Intern(m.build_id);
  }
  for (const Function& f : p.functions) {
    st.Intern(f.name);
    st.Intern(f.system_name);
    st.Intern(f.filename);
  }
  st.Intern(p.drop_frames);
  st.Intern(p.keep_frames);
  st.Intern(p.period_type.type);
  st.Intern(p.period_type.unit);
  for (const std::string& c : p.comments) st.Intern(c);
  st.Intern(p.default_sample_type);
}

// proto3 omits fields equal to their default; so do we, to keep files small.
void PutInt(pbf_writer& w, protozero::pbf_tag_type tag, int64_t v) {
  if (v != 0) w.add_int64(tag, v);
}
void PutUint(pbf_writer& w, protozero::pbf_tag_type tag, uint64_t v) {
  if (v != 0) w.add_uint64(tag, v);
}
void PutBool(pbf_writer& w, protozero::pbf_tag_type tag, bool v) {
  if (v) w.add_bool(tag, v);
}

// Writes sub-messages. Not with protozero's nested pbf_writer(parent, tag): that one removes a
// sub-message that ends up empty (and so does its commit()), and with default values omitted an
// empty message is a real value: ValueType{"", ""}, Label{}, a Sample without locations, values
// or labels would vanish, and a vanished sample type leaves every sample with a value too many.
// Each sub-message is encoded into a buffer of its own and added whole, empty or not. One buffer
// per nesting level, reused, so that a large profile does not allocate once per message.
class MessageWriter {
 public:
  explicit MessageWriter(const StringTable& st) : st_(st) {}

  void PutValueType(pbf_writer& parent, protozero::pbf_tag_type tag, const ValueType& vt) {
    Put(parent, tag, outer_, [&](pbf_writer& w) {
      PutInt(w, pprof::kValueTypeType, st_.Index(vt.type));
      PutInt(w, pprof::kValueTypeUnit, st_.Index(vt.unit));
    });
  }

  void PutSample(pbf_writer& parent, const Sample& s) {
    Put(parent, pprof::kProfileSample, outer_, [&](pbf_writer& w) {
      w.add_packed_uint64(pprof::kSampleLocationId, s.location_ids.begin(), s.location_ids.end());
      w.add_packed_int64(pprof::kSampleValue, s.values.begin(), s.values.end());
      for (const Label& l : s.labels) {
        Put(w, pprof::kSampleLabel, inner_, [&](pbf_writer& lw) {
          PutInt(lw, pprof::kLabelKey, st_.Index(l.key));
          PutInt(lw, pprof::kLabelStr, st_.Index(l.str));
          PutInt(lw, pprof::kLabelNum, l.num);
          PutInt(lw, pprof::kLabelNumUnit, st_.Index(l.num_unit));
        });
      }
    });
  }

  void PutMapping(pbf_writer& parent, const Mapping& m) {
    Put(parent, pprof::kProfileMapping, outer_, [&](pbf_writer& w) {
      PutUint(w, pprof::kMappingId, m.id);
      PutUint(w, pprof::kMappingMemoryStart, m.memory_start);
      PutUint(w, pprof::kMappingMemoryLimit, m.memory_limit);
      PutUint(w, pprof::kMappingFileOffset, m.file_offset);
      PutInt(w, pprof::kMappingFilename, st_.Index(m.filename));
      PutInt(w, pprof::kMappingBuildId, st_.Index(m.build_id));
      PutBool(w, pprof::kMappingHasFunctions, m.has_functions);
      PutBool(w, pprof::kMappingHasFilenames, m.has_filenames);
      PutBool(w, pprof::kMappingHasLineNumbers, m.has_line_numbers);
      PutBool(w, pprof::kMappingHasInlineFrames, m.has_inline_frames);
    });
  }

  void PutLocation(pbf_writer& parent, const Location& loc) {
    Put(parent, pprof::kProfileLocation, outer_, [&](pbf_writer& w) {
      PutUint(w, pprof::kLocationId, loc.id);
      PutUint(w, pprof::kLocationMappingId, loc.mapping_id);
      PutUint(w, pprof::kLocationAddress, loc.address);
      for (const Line& line : loc.lines) {
        Put(w, pprof::kLocationLine, inner_, [&](pbf_writer& lw) {
          PutUint(lw, pprof::kLineFunctionId, line.function_id);
          PutInt(lw, pprof::kLineLine, line.line);
        });
      }
      PutBool(w, pprof::kLocationIsFolded, loc.is_folded);
    });
  }

  void PutFunction(pbf_writer& parent, const Function& f) {
    Put(parent, pprof::kProfileFunction, outer_, [&](pbf_writer& w) {
      PutUint(w, pprof::kFunctionId, f.id);
      PutInt(w, pprof::kFunctionName, st_.Index(f.name));
      PutInt(w, pprof::kFunctionSystemName, st_.Index(f.system_name));
      PutInt(w, pprof::kFunctionFilename, st_.Index(f.filename));
      PutInt(w, pprof::kFunctionStartLine, f.start_line);
    });
  }

 private:
  // Encodes one sub-message with `fill` into `buffer` and adds it to `parent` under `tag`.
  template <typename Fill>
  static void Put(pbf_writer& parent, protozero::pbf_tag_type tag, std::string& buffer,
                  Fill&& fill) {
    buffer.clear();
    {
      pbf_writer w(buffer);
      fill(w);
    }
    parent.add_message(tag, buffer);
  }

  const StringTable& st_;
  std::string outer_;  // a message directly inside Profile
  std::string inner_;  // a message inside that one (Label, Line)
};

// `p` with `st` (holding at least its strings), and `encoded_samples` after p's own samples.
std::string Encode(const Profile& p, const StringTable& st, std::string_view encoded_samples,
                   bool gzip) {
  MessageWriter mw(st);

  std::string out;
  pbf_writer pw(out);
  for (const ValueType& vt : p.sample_types) mw.PutValueType(pw, pprof::kProfileSampleType, vt);
  for (const Sample& s : p.samples) mw.PutSample(pw, s);
  out.append(encoded_samples);  // whole fields, between two of pw's, which keeps no state
  for (const Mapping& m : p.mappings) mw.PutMapping(pw, m);
  for (const Location& loc : p.locations) mw.PutLocation(pw, loc);
  for (const Function& f : p.functions) mw.PutFunction(pw, f);
  for (const std::string* s : st.strings()) pw.add_string(pprof::kProfileStringTable, *s);
  PutInt(pw, pprof::kProfileDropFrames, st.Index(p.drop_frames));
  PutInt(pw, pprof::kProfileKeepFrames, st.Index(p.keep_frames));
  PutInt(pw, pprof::kProfileTimeNanos, p.time_nanos);
  PutInt(pw, pprof::kProfileDurationNanos, p.duration_nanos);
  // Absent reads back as ValueType{}, so the default can be left out.
  if (p.period_type != ValueType{}) mw.PutValueType(pw, pprof::kProfilePeriodType, p.period_type);
  PutInt(pw, pprof::kProfilePeriod, p.period);
  std::vector<int64_t> comments;
  for (const std::string& c : p.comments) comments.push_back(st.Index(c));
  pw.add_packed_int64(pprof::kProfileComment, comments.begin(), comments.end());
  PutInt(pw, pprof::kProfileDefaultSampleType, st.Index(p.default_sample_type));
  return gzip ? internal::Gzip(out) : out;
}

}  // namespace

std::string EncodeProfile(const Profile& p, bool gzip) {
  StringTable st;
  InternAll(p, st);
  return Encode(p, st, {}, gzip);
}

std::string EncodeProfile(const RewritableProfile& p, bool gzip) {
  StringTable st(p.strings);
  InternAll(p.tables, st);
  return Encode(p.tables, st, p.encoded_samples, gzip);
}

}  // namespace heaprec::profile
