// pprof encoding with protozero. Strings are interned in a first walk over the model so that the
// message can then be written in field-number order, as pprof's own encoder does.
#include "profile/pprof_writer.h"

#include <protozero/pbf_writer.hpp>
#include <unordered_map>

#include "profile/atomic_file.h"
#include "profile/gzip.h"

namespace heaprec {
namespace {

using protozero::pbf_writer;

class StringTable {
 public:
  StringTable() { Intern(""); }

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

void PutValueType(pbf_writer& parent, protozero::pbf_tag_type tag, const ValueType& vt,
                  const StringTable& st) {
  pbf_writer w(parent, tag);
  PutInt(w, 1, st.Index(vt.type));
  PutInt(w, 2, st.Index(vt.unit));
}

}  // namespace

std::string EncodeProfile(const Profile& p, bool gzip) {
  StringTable st;
  InternAll(p, st);

  std::string out;
  {
    pbf_writer pw(out);
    for (const ValueType& vt : p.sample_types) PutValueType(pw, 1, vt, st);
    for (const Sample& s : p.samples) {
      pbf_writer w(pw, 2);
      w.add_packed_uint64(1, s.location_ids.begin(), s.location_ids.end());
      w.add_packed_int64(2, s.values.begin(), s.values.end());
      for (const Label& l : s.labels) {
        pbf_writer lw(w, 3);
        PutInt(lw, 1, st.Index(l.key));
        PutInt(lw, 2, st.Index(l.str));
        PutInt(lw, 3, l.num);
        PutInt(lw, 4, st.Index(l.num_unit));
      }
    }
    for (const Mapping& m : p.mappings) {
      pbf_writer w(pw, 3);
      PutUint(w, 1, m.id);
      PutUint(w, 2, m.memory_start);
      PutUint(w, 3, m.memory_limit);
      PutUint(w, 4, m.file_offset);
      PutInt(w, 5, st.Index(m.filename));
      PutInt(w, 6, st.Index(m.build_id));
      PutBool(w, 7, m.has_functions);
      PutBool(w, 8, m.has_filenames);
      PutBool(w, 9, m.has_line_numbers);
      PutBool(w, 10, m.has_inline_frames);
    }
    for (const Location& loc : p.locations) {
      pbf_writer w(pw, 4);
      PutUint(w, 1, loc.id);
      PutUint(w, 2, loc.mapping_id);
      PutUint(w, 3, loc.address);
      for (const Line& line : loc.lines) {
        pbf_writer lw(w, 4);
        PutUint(lw, 1, line.function_id);
        PutInt(lw, 2, line.line);
      }
      PutBool(w, 5, loc.is_folded);
    }
    for (const Function& f : p.functions) {
      pbf_writer w(pw, 5);
      PutUint(w, 1, f.id);
      PutInt(w, 2, st.Index(f.name));
      PutInt(w, 3, st.Index(f.system_name));
      PutInt(w, 4, st.Index(f.filename));
      PutInt(w, 5, f.start_line);
    }
    for (const std::string* s : st.strings()) pw.add_string(6, *s);
    PutInt(pw, 7, st.Index(p.drop_frames));
    PutInt(pw, 8, st.Index(p.keep_frames));
    PutInt(pw, 9, p.time_nanos);
    PutInt(pw, 10, p.duration_nanos);
    if (!p.period_type.type.empty() || !p.period_type.unit.empty()) {
      PutValueType(pw, 11, p.period_type, st);
    }
    PutInt(pw, 12, p.period);
    std::vector<int64_t> comments;
    for (const std::string& c : p.comments) comments.push_back(st.Index(c));
    pw.add_packed_int64(13, comments.begin(), comments.end());
    PutInt(pw, 14, st.Index(p.default_sample_type));
  }  // sub-writers commit on destruction; past this scope `out` is complete
  return gzip ? internal::Gzip(out) : out;
}

void WriteProfileFile(const Profile& profile, const std::string& path) {
  internal::WriteFileAtomically(path, EncodeProfile(profile, true));
}

}  // namespace heaprec
