// pprof decoding with protozero. Two passes over the top-level message: the first collects the
// string table (which may appear anywhere), the second decodes everything else and resolves
// string indexes. Field numbers follow github.com/google/pprof/proto/profile.proto.
//
// Every allocation the model makes is charged, before it is made, against the memory budget of
// ReadOptions::max_decoded_bytes (see pprof_reader.h): protobuf is so much denser than the model
// that bounding the input alone does not bound memory.
#include "profile/pprof_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <protozero/exception.hpp>
#include <protozero/pbf_reader.hpp>
#include <protozero/pbf_writer.hpp>
#include <unordered_set>

#include "profile/foreign_format.h"
#include "profile/gzip.h"
#include "schema/pprof_fields.h"

namespace heaprec::profile {
namespace {

using protozero::pbf_reader;
using protozero::pbf_wire_type;

// What one heap block costs beyond its requested size (glibc: an 8-byte header, 16-byte
// granularity, 32-byte minimum).
constexpr size_t kBlockOverheadBytes = 16;
// One entry of the unordered_set<uint64_t> id indexes built by Validate: a 16-byte node in a
// 32-byte block, plus about one 8-byte bucket.
constexpr size_t kIdIndexEntryBytes = 40;

// "2048 MiB", or in KiB or bytes for budgets that are not whole MiB (tests use small ones).
std::string FormatBytes(size_t bytes) {
  if (bytes % (size_t{1} << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes % (size_t{1} << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

// "SOURCE" followed by `rest` (": problem", or " is ..."), as the one-line error.
[[noreturn]] void Reject(std::string_view source, const std::string& rest) {
  throw ProfileError(std::string(source) + rest);
}

// protozero's framing errors in words ("end of buffer exception" is the decoder's view, not the
// user's).
std::string Describe(const protozero::exception& e) {
  if (dynamic_cast<const protozero::end_of_buffer_exception*>(&e) != nullptr) {
    return "its protobuf data ends in the middle of a field";
  }
  if (dynamic_cast<const protozero::varint_too_long_exception*>(&e) != nullptr) {
    return "its protobuf data has a number too long to be one";
  }
  if (dynamic_cast<const protozero::unknown_pbf_wire_type_exception*>(&e) != nullptr) {
    return "its protobuf data has a field of an unknown kind";
  }
  if (dynamic_cast<const protozero::invalid_length_exception*>(&e) != nullptr) {
    return "its protobuf data has a field of an impossible length";
  }
  return "its protobuf data has an invalid field number";
}

class Decoder {
 public:
  Decoder(std::string_view source, size_t budget) : source_(source), budget_(budget) {}

  // Decodes `data`; with `kept_samples`, the samples are checked but not decoded: their fields
  // (tag, length and bytes) are appended there as they were, and Profile::samples stays empty.
  Profile Decode(std::string_view data, std::string* kept_samples = nullptr) {
    kept_samples_ = kept_samples;
    CollectStrings(data);
    Profile p;
    pbf_reader msg(data.data(), data.size());
    int64_t default_sample_type = 0, drop_frames = 0, keep_frames = 0;
    while (msg.next()) {
      switch (msg.tag()) {
        case pprof::kProfileSampleType:
          Reserve(p.sample_types, 1);
          p.sample_types.push_back(DecodeValueType(SubMessage(msg)));
          break;
        case pprof::kProfileSample:
          if (kept_samples_ != nullptr) {
            KeepSample(msg);
            break;
          }
          Reserve(p.samples, 1);
          p.samples.push_back(DecodeSample(SubMessage(msg)));
          break;
        case pprof::kProfileMapping:
          Reserve(p.mappings, 1);
          p.mappings.push_back(DecodeMapping(SubMessage(msg)));
          break;
        case pprof::kProfileLocation:
          Reserve(p.locations, 1);
          p.locations.push_back(DecodeLocation(SubMessage(msg)));
          break;
        case pprof::kProfileFunction:
          Reserve(p.functions, 1);
          p.functions.push_back(DecodeFunction(SubMessage(msg)));
          break;
        case pprof::kProfileDropFrames:
          drop_frames = Int(msg);
          break;
        case pprof::kProfileKeepFrames:
          keep_frames = Int(msg);
          break;
        case pprof::kProfileTimeNanos:
          p.time_nanos = Int(msg);
          break;
        case pprof::kProfileDurationNanos:
          p.duration_nanos = Int(msg);
          break;
        case pprof::kProfilePeriodType:
          p.period_type = DecodeValueType(SubMessage(msg));  // the charge for the old value stays
          break;
        case pprof::kProfilePeriod:
          p.period = Int(msg);
          break;
        case pprof::kProfileComment:
          if (msg.wire_type() == pbf_wire_type::length_delimited) {
            auto indexes = msg.get_packed_int64();
            Reserve(p.comments, indexes.size());
            for (int64_t index : indexes) p.comments.push_back(String(index, "comment"));
          } else {
            Reserve(p.comments, 1);
            p.comments.push_back(String(Int(msg), "comment"));
          }
          break;
        case pprof::kProfileDefaultSampleType:
          default_sample_type = Int(msg);
          break;
        default:
          msg.skip();  // includes the string table, already collected
      }
    }
    p.drop_frames = String(drop_frames, "drop_frames");
    p.keep_frames = String(keep_frames, "keep_frames");
    p.default_sample_type = String(default_sample_type, "default_sample_type");
    Validate(p);
    return p;
  }

  [[noreturn]] void Fail(const std::string& problem) const {
    throw ProfileError(std::string(source_) + ": " + problem);
  }

  // The string table as read (the samples kept encoded refer to it by index).
  std::vector<std::string> TakeStrings() { return std::move(strings_); }

 private:
  // --- memory budget ---

  [[noreturn]] void OverBudget() const {
    Fail("profile is too large: it would need more than " + FormatBytes(budget_) + " to load");
  }

  // Accounts for `bytes` more of the model, or fails if that would pass the budget.
  void Charge(size_t bytes) {
    if (bytes > budget_ - used_) OverBudget();
    used_ += bytes;
  }

  // Makes room for `extra` more elements in `v`, charging the new block before allocating it.
  // Growth is explicit (doubling, or exactly what a packed field needs) so that the charge is the
  // real capacity; the old block counts until it is freed, as both coexist while elements move.
  template <typename T>
  void Reserve(std::vector<T>& v, size_t extra) {
    size_t old_capacity = v.capacity();
    if (extra <= old_capacity - v.size()) return;
    size_t capacity = std::max(v.size() + extra, 2 * old_capacity);
    if (capacity > (budget_ - used_) / sizeof(T)) OverBudget();  // (and no overflow below)
    Charge(capacity * sizeof(T) + kBlockOverheadBytes);
    v.reserve(capacity);
    if (old_capacity != 0) used_ -= old_capacity * sizeof(T) + kBlockOverheadBytes;
  }

  // Charges a copy of a string of `size` bytes: nothing for one that fits std::string's own
  // buffer, else its heap block.
  void ChargeString(size_t size) {
    static const size_t kInlineCapacity = std::string().capacity();
    if (size > kInlineCapacity) Charge(size + 1 + kBlockOverheadBytes);
  }

  // --- decoding ---

  void CollectStrings(std::string_view data) {
    pbf_reader msg(data.data(), data.size());
    while (msg.next()) {
      if (msg.tag() == pprof::kProfileStringTable) {
        Expect(msg, pbf_wire_type::length_delimited);
        protozero::data_view s = msg.get_view();
        Reserve(strings_, 1);
        ChargeString(s.size());
        strings_.emplace_back(s.data(), s.size());
      } else {
        msg.skip();
      }
    }
    // profile.proto requires string_table[0] == ""; anything else means this is not a profile.
    if (strings_.empty() || !strings_[0].empty()) {
      Fail("not a pprof profile (string table missing or its first entry is not empty)");
    }
  }

  void Expect(const pbf_reader& msg, pbf_wire_type type) const {
    if (msg.wire_type() != type) {
      Fail("field " + std::to_string(msg.tag()) + " has an unexpected wire type");
    }
  }

  pbf_reader SubMessage(pbf_reader& msg) const {
    Expect(msg, pbf_wire_type::length_delimited);
    return msg.get_message();
  }

  int64_t Int(pbf_reader& msg) const {
    Expect(msg, pbf_wire_type::varint);
    return msg.get_int64();
  }
  uint64_t Uint(pbf_reader& msg) const {
    Expect(msg, pbf_wire_type::varint);
    return msg.get_uint64();
  }
  bool Bool(pbf_reader& msg) const {
    Expect(msg, pbf_wire_type::varint);
    // Not get_bool(): protozero 1.7.1 reads its first byte before checking that one is left (an
    // over-read at the end of the buffer), and takes a non-canonical zero such as 80 00 for true.
    return msg.get_uint64() != 0;
  }

  // Repeated scalars may be packed (proto3 default) or one field per element; accept both.
  void AppendInt64s(pbf_reader& msg, std::vector<int64_t>& out) {
    if (msg.wire_type() == pbf_wire_type::length_delimited) {
      auto range = msg.get_packed_int64();
      Reserve(out, range.size());
      out.insert(out.end(), range.begin(), range.end());
    } else {
      Reserve(out, 1);
      out.push_back(Int(msg));
    }
  }
  void AppendUint64s(pbf_reader& msg, std::vector<uint64_t>& out) {
    if (msg.wire_type() == pbf_wire_type::length_delimited) {
      auto range = msg.get_packed_uint64();
      Reserve(out, range.size());
      out.insert(out.end(), range.begin(), range.end());
    } else {
      Reserve(out, 1);
      out.push_back(Uint(msg));
    }
  }

  void CheckStringIndex(int64_t index, const char* what) const {
    if (index < 0 || static_cast<uint64_t>(index) >= strings_.size()) {
      Fail(std::string(what) + " string index " + std::to_string(index) +
           " is out of range (string table has " + std::to_string(strings_.size()) + " entries)");
    }
  }

  // The string at `index`, charged as the copy the caller is about to make.
  const std::string& String(int64_t index, const char* what) {
    CheckStringIndex(index, what);
    const std::string& s = strings_[static_cast<size_t>(index)];
    ChargeString(s.size());
    return s;
  }

  ValueType DecodeValueType(pbf_reader msg) {
    ValueType vt;
    while (msg.next()) {
      switch (msg.tag()) {
        case pprof::kValueTypeType:
          vt.type = String(Int(msg), "value type");
          break;
        case pprof::kValueTypeUnit:
          vt.unit = String(Int(msg), "value unit");
          break;
        default:
          msg.skip();
      }
    }
    return vt;
  }

  Label DecodeLabel(pbf_reader msg) {
    Label label;
    while (msg.next()) {
      switch (msg.tag()) {
        case pprof::kLabelKey:
          label.key = String(Int(msg), "label key");
          break;
        case pprof::kLabelStr:
          label.str = String(Int(msg), "label value");
          break;
        case pprof::kLabelNum:
          label.num = Int(msg);
          break;
        case pprof::kLabelNumUnit:
          label.num_unit = String(Int(msg), "label unit");
          break;
        default:
          msg.skip();
      }
    }
    return label;
  }

  Sample DecodeSample(pbf_reader msg) {
    Sample s;
    while (msg.next()) {
      switch (msg.tag()) {
        case pprof::kSampleLocationId:
          AppendUint64s(msg, s.location_ids);
          break;
        case pprof::kSampleValue:
          AppendInt64s(msg, s.values);
          break;
        case pprof::kSampleLabel:
          Reserve(s.labels, 1);
          s.labels.push_back(DecodeLabel(SubMessage(msg)));
          break;
        default:
          msg.skip();
      }
    }
    return s;
  }

  // A sample kept as it was encoded: appended whole to kept_samples_, and checked by Validate
  // (ScanKeptSample) once every string, sample type and location is known.
  void KeepSample(pbf_reader& msg) {
    Expect(msg, pbf_wire_type::length_delimited);
    protozero::data_view sample = msg.get_view();
    Charge(sample.size() + 2 * protozero::max_varint_length);
    protozero::pbf_writer(*kept_samples_)
        .add_message(pprof::kProfileSample, sample.data(), sample.size());
  }

  // Checks the encoded sample `msg` as DecodeSample would read it (wire types, label string
  // indexes, every varint whole), calls `each(location_id)` for each location id, and returns its
  // number of values.
  template <typename Each>
  size_t ScanKeptSample(pbf_reader msg, Each each) const {
    size_t values = 0;
    while (msg.next()) {
      switch (msg.tag()) {
        case pprof::kSampleLocationId:
          if (msg.wire_type() == pbf_wire_type::length_delimited) {
            for (uint64_t id : msg.get_packed_uint64()) each(id);
          } else {
            each(Uint(msg));
          }
          break;
        case pprof::kSampleValue:
          if (msg.wire_type() == pbf_wire_type::length_delimited) {
            // Decoded, not only counted (size() counts the bytes that end a varint): a varint
            // cut short fails here as it fails DecodeSample.
            for (int64_t value : msg.get_packed_int64()) {
              static_cast<void>(value);
              ++values;
            }
          } else {
            Int(msg);
            ++values;
          }
          break;
        case pprof::kSampleLabel:
          CheckKeptLabel(SubMessage(msg));
          break;
        default:
          msg.skip();
      }
    }
    return values;
  }

  void CheckKeptLabel(pbf_reader label) const {
    while (label.next()) {
      switch (label.tag()) {
        case pprof::kLabelKey:
          CheckStringIndex(Int(label), "label key");
          break;
        case pprof::kLabelStr:
          CheckStringIndex(Int(label), "label value");
          break;
        case pprof::kLabelNum:
          Int(label);
          break;
        case pprof::kLabelNumUnit:
          CheckStringIndex(Int(label), "label unit");
          break;
        default:
          label.skip();
      }
    }
  }

  Mapping DecodeMapping(pbf_reader msg) {
    Mapping m;
    while (msg.next()) {
      switch (msg.tag()) {
        case pprof::kMappingId:
          m.id = Uint(msg);
          break;
        case pprof::kMappingMemoryStart:
          m.memory_start = Uint(msg);
          break;
        case pprof::kMappingMemoryLimit:
          m.memory_limit = Uint(msg);
          break;
        case pprof::kMappingFileOffset:
          m.file_offset = Uint(msg);
          break;
        case pprof::kMappingFilename:
          m.filename = String(Int(msg), "mapping filename");
          break;
        case pprof::kMappingBuildId:
          m.build_id = String(Int(msg), "mapping build id");
          break;
        case pprof::kMappingHasFunctions:
          m.has_functions = Bool(msg);
          break;
        case pprof::kMappingHasFilenames:
          m.has_filenames = Bool(msg);
          break;
        case pprof::kMappingHasLineNumbers:
          m.has_line_numbers = Bool(msg);
          break;
        case pprof::kMappingHasInlineFrames:
          m.has_inline_frames = Bool(msg);
          break;
        default:
          msg.skip();
      }
    }
    return m;
  }

  Line DecodeLine(pbf_reader msg) const {
    Line line;
    while (msg.next()) {
      switch (msg.tag()) {
        case pprof::kLineFunctionId:
          line.function_id = Uint(msg);
          break;
        case pprof::kLineLine:
          line.line = Int(msg);
          break;
        default:
          msg.skip();  // e.g. the newer pprof::kLineColumn field
      }
    }
    return line;
  }

  Location DecodeLocation(pbf_reader msg) {
    Location loc;
    while (msg.next()) {
      switch (msg.tag()) {
        case pprof::kLocationId:
          loc.id = Uint(msg);
          break;
        case pprof::kLocationMappingId:
          loc.mapping_id = Uint(msg);
          break;
        case pprof::kLocationAddress:
          loc.address = Uint(msg);
          break;
        case pprof::kLocationLine:
          Reserve(loc.lines, 1);
          loc.lines.push_back(DecodeLine(SubMessage(msg)));
          break;
        case pprof::kLocationIsFolded:
          loc.is_folded = Bool(msg);
          break;
        default:
          msg.skip();
      }
    }
    return loc;
  }

  Function DecodeFunction(pbf_reader msg) {
    Function f;
    while (msg.next()) {
      switch (msg.tag()) {
        case pprof::kFunctionId:
          f.id = Uint(msg);
          break;
        case pprof::kFunctionName:
          f.name = String(Int(msg), "function name");
          break;
        case pprof::kFunctionSystemName:
          f.system_name = String(Int(msg), "function system name");
          break;
        case pprof::kFunctionFilename:
          f.filename = String(Int(msg), "function filename");
          break;
        case pprof::kFunctionStartLine:
          f.start_line = Int(msg);
          break;
        default:
          msg.skip();
      }
    }
    return f;
  }

  // Checks the references between entities, mirroring what pprof itself refuses.
  void Validate(const Profile& p) {
    Charge((p.mappings.size() + p.functions.size() + p.locations.size()) * kIdIndexEntryBytes);
    std::unordered_set<uint64_t> mapping_ids, location_ids, function_ids;
    mapping_ids.reserve(p.mappings.size());
    function_ids.reserve(p.functions.size());
    location_ids.reserve(p.locations.size());
    for (const Mapping& m : p.mappings) {
      if (m.id == 0) Fail("mapping with reserved id 0");
      if (!mapping_ids.insert(m.id).second) Fail("duplicate mapping id " + std::to_string(m.id));
    }
    for (const Function& f : p.functions) {
      if (f.id == 0) Fail("function with reserved id 0");
      if (!function_ids.insert(f.id).second) Fail("duplicate function id " + std::to_string(f.id));
    }
    for (const Location& loc : p.locations) {
      std::string name = "location " + std::to_string(loc.id);
      if (loc.id == 0) Fail("location with reserved id 0");
      if (!location_ids.insert(loc.id).second) Fail("duplicate " + name);
      if (loc.mapping_id != 0 && !mapping_ids.count(loc.mapping_id)) {
        Fail(name + " refers to missing mapping id " + std::to_string(loc.mapping_id));
      }
      for (const Line& line : loc.lines) {
        if (!function_ids.count(line.function_id)) {
          Fail(name + " refers to missing function id " + std::to_string(line.function_id));
        }
      }
    }
    // The samples look up one location per frame: in a bitmap when the ids are dense (heaprec
    // numbers them from 1), else in the set.
    uint64_t max_location_id = 0;
    for (const Location& loc : p.locations) max_location_id = std::max(max_location_id, loc.id);
    std::vector<bool> dense_location_ids;
    if (max_location_id <= 4 * p.locations.size() + 64) {
      Charge(max_location_id / 8 + 1 + kBlockOverheadBytes);
      dense_location_ids.assign(max_location_id + 1, false);
      for (const Location& loc : p.locations) dense_location_ids[loc.id] = true;
    }
    auto known_location = [&](uint64_t id) {
      if (dense_location_ids.empty()) return location_ids.count(id) != 0;
      return id < dense_location_ids.size() && dense_location_ids[id];
    };
    // A sample's values must match the sample types, then every location id must be known.
    auto check_sample = [&](size_t i, size_t values, std::optional<uint64_t> unknown_location) {
      if (values != p.sample_types.size()) {
        Fail("sample " + std::to_string(i) + " has " + std::to_string(values) +
             " values but the profile has " + std::to_string(p.sample_types.size()) +
             " sample types");
      }
      if (unknown_location) {
        Fail("sample " + std::to_string(i) + " refers to missing location id " +
             std::to_string(*unknown_location));
      }
    };
    for (size_t i = 0; i < p.samples.size(); ++i) {
      const Sample& s = p.samples[i];
      auto unknown = std::find_if_not(s.location_ids.begin(), s.location_ids.end(), known_location);
      check_sample(i, s.values.size(),
                   unknown == s.location_ids.end() ? std::nullopt : std::optional(*unknown));
    }
    if (kept_samples_ == nullptr) return;
    pbf_reader kept(*kept_samples_);
    for (size_t i = 0; kept.next(); ++i) {
      std::optional<uint64_t> unknown;
      const size_t values = ScanKeptSample(kept.get_message(), [&](uint64_t id) {
        if (!unknown && !known_location(id)) unknown = id;
      });
      check_sample(i, values, unknown);
    }
  }

  std::string_view source_;
  size_t budget_;
  size_t used_ = 0;  // never above budget_
  std::vector<std::string> strings_;
  std::string* kept_samples_ = nullptr;
};

}  // namespace

namespace {

// Decodes `bytes` (gzip or raw protobuf) with `decoder`, keeping the samples encoded in
// `kept_samples` when given (Decoder::Decode).
Profile DecodeBytes(std::string_view bytes, std::string_view source, const ReadOptions& options,
                    Decoder& decoder, std::string* kept_samples) {
  if (bytes.empty()) {
    Reject(source, std::string(": empty file, not a profile; ") + kWhatHeaprecReads);
  }
  // Another profiler's file, recognized before the protobuf decoder gets to misread it.
  if (std::string what = RecognizeForeignData(bytes); !what.empty()) Reject(source, " " + what);
  bool gzipped = internal::LooksGzipped(bytes);
  std::string inflated;
  if (gzipped) {
    inflated = internal::Gunzip(bytes, options.max_decompressed_bytes, source);
    bytes = inflated;
    if (std::string what = RecognizeForeignData(bytes); !what.empty()) Reject(source, " " + what);
  } else if (bytes.size() > options.max_decompressed_bytes) {
    decoder.Fail("profile exceeds the size limit");
  }
  Profile profile;
  try {
    profile = decoder.Decode(bytes, kept_samples);
  } catch (const std::exception& e) {
    // No pprof encoding looks like text; whatever the decoder made of it, saying "text" is right.
    if (LooksLikeText(bytes)) Reject(source, " " + DescribeText(bytes, gzipped));
    const auto* framing = dynamic_cast<const protozero::exception*>(&e);
    if (framing == nullptr) throw;
    // protozero reports framing problems: truncated fields, overlong varints, bad tags.
    if (gzipped) {
      decoder.Fail("malformed profile data inside the gzip stream (" + Describe(*framing) + ")");
    }
    decoder.Fail("not a gzip or pprof file (" + Describe(*framing) + ")");
  }
  if (std::string what = RecognizeForeignProfile(profile); !what.empty()) {
    Reject(source, " " + what);
  }
  return profile;
}

// The file's bytes, read up to one byte past the size cap; errors name the path.
std::string ReadFileBytes(const std::string& path, const ReadOptions& options) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw ProfileError("cannot open " + path + ": " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  struct stat st {};
  if (fstat(fd, &st) != 0) throw ProfileError("cannot stat " + path + ": " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw ProfileError(path + ": is a directory");
  // Read at most one byte past the cap so an oversized file is detected without reading it all.
  size_t cap = std::max(options.max_decompressed_bytes, kMaxProfileBytes);
  std::string data;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw ProfileError("cannot read " + path + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    data.append(buf, static_cast<size_t>(n));
    if (data.size() > cap) throw ProfileError(path + ": file exceeds the size limit");
  }
  return data;
}

}  // namespace

Profile ReadProfile(std::string_view bytes, std::string_view source, const ReadOptions& options) {
  Decoder decoder(source, options.max_decoded_bytes);
  return DecodeBytes(bytes, source, options, decoder, nullptr);
}

Profile ReadProfileFile(const std::string& path, const ReadOptions& options) {
  return ReadProfile(ReadFileBytes(path, options), path, options);
}

RewritableProfile ReadRewritableProfile(std::string_view bytes, std::string_view source,
                                        const ReadOptions& options) {
  Decoder decoder(source, options.max_decoded_bytes);
  RewritableProfile read;
  read.tables = DecodeBytes(bytes, source, options, decoder, &read.encoded_samples);
  read.strings = decoder.TakeStrings();
  return read;
}

RewritableProfile ReadRewritableProfileFile(const std::string& path, const ReadOptions& options) {
  return ReadRewritableProfile(ReadFileBytes(path, options), path, options);
}

}  // namespace heaprec::profile
