#include "core/heap_profile_encoder.h"

#include <cmath>
#include <cstring>
#include <protozero/basic_pbf_writer.hpp>

#include "core/arena_buffer.h"
#include "core/hash.h"
#include "schema/pprof_fields.h"
#include "schema/profile_schema.h"
#include "schema/runtime_frames.h"
#include "schema/sampling_weight.h"

namespace heaprec {
namespace {

using Writer = protozero::basic_pbf_writer<ArenaBuffer>;

// The profile's string table: index -> string, plus a hash index for interning. Native profiles
// have a few dozen strings; a Ruby profile has one per method name and file, thousands.
class EncoderStringTable {
 public:
  explicit EncoderStringTable(MemoryResource& memory) : memory_(memory) {}
  ~EncoderStringTable() {
    memory_.DeallocateArray(strings_, capacity_);
    memory_.DeallocateArray(slots_, slot_count_);
  }

  // Index of `s`, added if new; -1 when out of memory.
  std::int64_t Intern(const char* s) {
    if ((count_ + 1) * 2 > slot_count_ && !GrowSlots()) return -1;
    std::uint64_t hash = Hash(s);
    std::size_t mask = slot_count_ - 1;
    std::size_t slot = hash & mask;
    for (; slots_[slot] != 0; slot = (slot + 1) & mask) {
      const char* existing = strings_[slots_[slot] - 1];
      if (std::strcmp(existing, s) == 0) return static_cast<std::int64_t>(slots_[slot] - 1);
    }
    if (count_ == capacity_) {
      std::size_t capacity = capacity_ == 0 ? 64 : capacity_ * 2;
      auto* fresh = memory_.AllocateArray<const char*>(capacity);
      if (fresh == nullptr) return -1;
      if (count_ != 0) std::memcpy(fresh, strings_, count_ * sizeof(const char*));
      memory_.DeallocateArray(strings_, capacity_);
      strings_ = fresh;
      capacity_ = capacity;
    }
    strings_[count_] = s;  // callers keep their strings alive until the profile is written
    slots_[slot] = static_cast<std::uint32_t>(++count_);
    return static_cast<std::int64_t>(count_ - 1);
  }
  std::size_t size() const { return count_; }
  const char* at(std::size_t i) const { return strings_[i]; }

 private:
  static std::uint64_t Hash(const char* s) {
    std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a, then mixed for the low bits
    for (; *s != '\0'; ++s) h = (h ^ static_cast<unsigned char>(*s)) * 0x100000001b3ull;
    return MixBits(h);
  }
  bool GrowSlots() {
    std::size_t slot_count = slot_count_ == 0 ? 256 : slot_count_ * 2;
    auto* fresh = memory_.AllocateArray<std::uint32_t>(slot_count);
    if (fresh == nullptr) return false;
    std::memset(fresh, 0, slot_count * sizeof(std::uint32_t));
    for (std::size_t i = 0; i < count_; ++i) {
      std::size_t slot = Hash(strings_[i]) & (slot_count - 1);
      while (fresh[slot] != 0) slot = (slot + 1) & (slot_count - 1);
      fresh[slot] = static_cast<std::uint32_t>(i + 1);
    }
    memory_.DeallocateArray(slots_, slot_count_);
    slots_ = fresh;
    slot_count_ = slot_count;
    return true;
  }

  MemoryResource& memory_;
  const char** strings_ = nullptr;
  std::size_t count_ = 0;
  std::size_t capacity_ = 0;
  std::uint32_t* slots_ = nullptr;  // 1 + string index, 0 = empty
  std::size_t slot_count_ = 0;
};

// Frame (an address, or a front end's frame value) -> id, open addressing. Ids are dense from 1 in
// first-seen order. Also maps a FrameDescriber's function ids to profile function ids.
class LocationIndex {
 public:
  explicit LocationIndex(MemoryResource& memory) : memory_(memory) {}
  ~LocationIndex() { memory_.DeallocateArray(slots_, capacity_); }

  // Returns the id of `address` and whether it was new; 0 when out of memory.
  std::uint64_t Find(std::uint64_t address, bool* is_new) {
    *is_new = false;
    if ((count_ + 1) * 2 > capacity_ && !Grow()) return 0;
    std::size_t mask = capacity_ - 1;
    for (std::size_t i = MixBits(address) & mask;; i = (i + 1) & mask) {
      if (slots_[i].id == 0) {
        slots_[i] = {address, ++count_};
        *is_new = true;
        return count_;
      }
      if (slots_[i].address == address) return slots_[i].id;
    }
  }

 private:
  struct Slot {
    std::uint64_t address;
    std::uint64_t id;  // 0 = empty
  };
  bool Grow() {
    std::size_t capacity = capacity_ == 0 ? 4096 : capacity_ * 2;
    Slot* fresh = memory_.AllocateArray<Slot>(capacity);
    if (fresh == nullptr) return false;
    std::memset(fresh, 0, capacity * sizeof(Slot));
    for (std::size_t i = 0; i < capacity_; ++i) {
      if (slots_[i].id == 0) continue;
      std::size_t j = MixBits(slots_[i].address) & (capacity - 1);
      while (fresh[j].id != 0) j = (j + 1) & (capacity - 1);
      fresh[j] = slots_[i];
    }
    memory_.DeallocateArray(slots_, capacity_);
    slots_ = fresh;
    capacity_ = capacity;
    return true;
  }

  MemoryResource& memory_;
  Slot* slots_ = nullptr;
  std::size_t capacity_ = 0;
  std::size_t count_ = 0;
};

// The bit that sets an AddressNamer's function keys apart from a FrameDescriber's function ids
// (below 2^63) in the one function table.
constexpr std::uint64_t kNamedFunctionKey = std::uint64_t{1} << 63;

class HeapProfileEncoder {
 public:
  HeapProfileEncoder(const HeapSnapshot& snapshot, const ProfileMetadata& metadata,
                     MemoryResource& memory, ByteSink& sink)
      : snapshot_(snapshot),
        metadata_(metadata),
        sink_(sink),
        strings_(memory),
        locations_(memory),
        functions_(memory),
        buffer_(memory),
        packed_(memory) {}

  bool Encode() {
    strings_.Intern("");  // pprof requires string_table[0] == ""
    if (!InternFixedStrings()) return false;
    // Every sample's label keys and units, looked up once (all among the fixed strings).
    bytes_label_ = S(schema::kBytesLabel);
    bytes_unit_ = S(schema::kBytesUnit);
    age_label_ = S(schema::kAgeLabel);
    nanoseconds_unit_ = S(schema::kNanosecondsUnit);
    count_unit_ = S(schema::kCountUnit);
    WriteHeader();
    WriteMappings();
    WriteSamples();
    WriteStringTable();
    Send();
    return ok_;
  }

 private:
  bool InternFixedStrings() {
    // In this order: the string table's indexes are part of the output.
    const char* fixed[] = {schema::kAllocObjects,    schema::kCountUnit,     schema::kAllocSpace,
                           schema::kBytesUnit,       schema::kInuseObjects,  schema::kInuseSpace,
                           metadata_.period_type,    metadata_.period_unit,  schema::kAgeLabel,
                           schema::kNanosecondsUnit, schema::kRuntimeFrames, schema::kStartFrames};
    for (const char* s : fixed) {
      if (strings_.Intern(s) < 0) return false;
    }
    for (std::size_t i = 0; i < metadata_.mapping_count; ++i) {
      if (strings_.Intern(metadata_.mappings[i].path) < 0 ||
          strings_.Intern(metadata_.mappings[i].build_id) < 0) {
        return false;
      }
    }
    for (std::size_t i = 0; i < metadata_.comment_count; ++i) {
      if (strings_.Intern(metadata_.comments[i]) < 0) return false;
    }
    return true;
  }

  // The index of `s`: a lookup for the fixed strings, an insertion for a front end's names. Out of
  // memory fails the whole profile.
  std::int64_t S(const char* s) {
    std::int64_t index = strings_.Intern(s);
    if (index < 0) {
      ok_ = false;
      return 0;
    }
    return index;
  }

  // Ends a top-level field: the buffered fields go to the sink once they are kSendBytes (one
  // deflate call per 64 KiB rather than one per sample, whose fixed cost was most of the
  // compression's), and at the end (Send).
  void Flush() {
    if (buffer_.failed()) ok_ = false;
    if (buffer_.size() >= kSendBytes) Send();
  }

  void Send() {
    if (buffer_.failed()) ok_ = false;
    if (ok_ && buffer_.size() != 0 && !sink_.Write(buffer_.data(), buffer_.size())) ok_ = false;
    buffer_.clear();
  }

  void WriteValueType(std::uint32_t field, const char* type, const char* unit) {
    Writer top(buffer_);
    Writer vt(top, field);
    vt.add_int64(pprof::kValueTypeType, S(type));
    vt.add_int64(pprof::kValueTypeUnit, S(unit));
  }

  void WriteHeader() {
    if (metadata_.allocation_totals) {
      WriteValueType(pprof::kProfileSampleType, schema::kAllocObjects, schema::kCountUnit);
      if (metadata_.allocation_sizes) {
        WriteValueType(pprof::kProfileSampleType, schema::kAllocSpace, schema::kBytesUnit);
      }
    }
    WriteValueType(pprof::kProfileSampleType, schema::kInuseObjects, schema::kCountUnit);
    WriteValueType(pprof::kProfileSampleType, schema::kInuseSpace, schema::kBytesUnit);
    WriteValueType(pprof::kProfilePeriodType, metadata_.period_type, metadata_.period_unit);
    {
      Writer top(buffer_);
      top.add_int64(pprof::kProfileTimeNanos, metadata_.time_nanos);
      top.add_int64(pprof::kProfileDurationNanos, metadata_.duration_nanos);
      top.add_int64(pprof::kProfilePeriod, static_cast<std::int64_t>(metadata_.sample_interval));
      top.add_int64(pprof::kProfileDefaultSampleType, S(metadata_.default_sample_type));
      // pprof charges each sample to the caller of the first frame that matches (from the root),
      // as heaprec's reports do from the leaf (analysis/site_rule.h); the start-up frames, kept,
      // are where it starts looking.
      top.add_int64(pprof::kProfileDropFrames, S(metadata_.drop_frames));
      top.add_int64(pprof::kProfileKeepFrames, S(metadata_.keep_frames));
      for (std::size_t i = 0; i < metadata_.comment_count; ++i) {
        top.add_int64(pprof::kProfileComment, S(metadata_.comments[i]));
      }
    }
    Flush();
  }

  void WriteMappings() {
    for (std::size_t i = 0; i < metadata_.mapping_count; ++i) {
      const ProfileMapping& m = metadata_.mappings[i];
      {
        Writer top(buffer_);
        Writer mapping(top, pprof::kProfileMapping);
        mapping.add_uint64(pprof::kMappingId, i + 1);
        mapping.add_uint64(pprof::kMappingMemoryStart, m.start);
        mapping.add_uint64(pprof::kMappingMemoryLimit, m.limit);
        mapping.add_uint64(pprof::kMappingFileOffset, m.file_offset);
        mapping.add_int64(pprof::kMappingFilename, S(m.path));
        mapping.add_int64(pprof::kMappingBuildId, S(m.build_id));
        if (metadata_.names != nullptr && metadata_.names->NamesMapping(i)) {
          mapping.add_uint64(pprof::kMappingHasFunctions, 1);
        }
      }
      Flush();
    }
  }

  // Mapping id (1-based) containing `address`, 0 if none: binary search over the sorted mappings.
  std::uint64_t MappingFor(std::uint64_t address) const {
    std::size_t lo = 0, hi = metadata_.mapping_count;
    while (lo < hi) {
      std::size_t mid = lo + (hi - lo) / 2;
      const ProfileMapping& m = metadata_.mappings[mid];
      if (address < m.start) {
        hi = mid;
      } else if (address >= m.limit) {
        lo = mid + 1;
      } else {
        return mid + 1;
      }
    }
    return 0;
  }

  // Writes the locations of `frames` not written before, and fills `ids` with their location ids.
  // `ids` may be `frames.frames` itself: each frame is read before its id replaces it.
  bool EmitLocations(const StackFrames& frames, std::uint64_t* ids) {
    for (std::uint32_t i = 0; i < frames.depth; ++i) {
      const std::uint64_t frame = frames.frames[i];
      bool is_new = false;
      std::uint64_t id = locations_.Find(frame, &is_new);
      if (id == 0) return false;
      ids[i] = id;
      if (!is_new) continue;
      if (metadata_.frames != nullptr && IsRuntimeFrame(frame)) {
        if (!EmitSymbolicLocation(frame, id)) return false;
        continue;
      }
      const std::uint64_t mapping = MappingFor(frame);
      std::uint64_t function_id = 0;
      if (metadata_.names != nullptr && !NamedFunction(frame, mapping, &function_id)) return false;
      {
        Writer top(buffer_);
        Writer location(top, pprof::kProfileLocation);
        location.add_uint64(pprof::kLocationId, id);
        if (mapping != 0) location.add_uint64(pprof::kLocationMappingId, mapping);
        location.add_uint64(pprof::kLocationAddress, frame);
        if (function_id != 0) {
          Writer line(location, pprof::kLocationLine);
          line.add_uint64(pprof::kLineFunctionId, function_id);
        }
      }
      Flush();
    }
    return true;
  }

  // The function the AddressNamer names `address` (in mapping id `mapping`, 0 for none) with,
  // written the first time it is seen, into *function_id, 0 when it has no name. False when
  // memory ran out.
  bool NamedFunction(std::uint64_t address, std::uint64_t mapping, std::uint64_t* function_id) {
    std::uint64_t key = 0;
    const std::size_t index = mapping != 0 ? mapping - 1 : AddressNamer::kNoMapping;
    const char* name = metadata_.names->Name(address, index, &key);
    *function_id = 0;
    if (name == nullptr) return true;
    bool new_function = false;
    // Tagged, so that a named function never takes a described one's id (both share the table).
    *function_id = functions_.Find(key | kNamedFunctionKey, &new_function);
    if (*function_id == 0) return false;
    if (new_function) {
      {
        Writer top(buffer_);
        Writer function(top, pprof::kProfileFunction);
        function.add_uint64(pprof::kFunctionId, *function_id);
        // The symbol table's (mangled) name as both: pprof demangles a function whose system
        // name is its name.
        function.add_int64(pprof::kFunctionName, S(name));
        function.add_int64(pprof::kFunctionSystemName, S(name));
      }
      Flush();
    }
    return ok_;
  }

  // Whether the FrameDescriber knows every frame (always true for address frames). Checked before
  // any location id is handed out, so a frame that cannot be described never gets one.
  bool AllFramesDescribable(const StackFrames& frames) const {
    if (metadata_.frames == nullptr) return true;
    FrameDescriber::Frame described;
    for (std::uint32_t i = 0; i < frames.depth; ++i) {
      if (!IsRuntimeFrame(frames.frames[i])) continue;
      if (!metadata_.frames->Describe(frames.frames[i], &described)) return false;
    }
    return true;
  }

  // A location with one line and no address, and its function the first time one is seen.
  bool EmitSymbolicLocation(std::uint64_t frame, std::uint64_t location_id) {
    FrameDescriber::Frame described;
    if (!metadata_.frames->Describe(frame, &described)) return false;
    bool new_function = false;
    std::uint64_t function_id = functions_.Find(described.function_id, &new_function);
    if (function_id == 0) return false;
    if (new_function) {
      {
        Writer top(buffer_);
        Writer function(top, pprof::kProfileFunction);
        function.add_uint64(pprof::kFunctionId, function_id);
        function.add_int64(pprof::kFunctionName, S(described.name));
        if (described.system_name != nullptr) {
          function.add_int64(pprof::kFunctionSystemName, S(described.system_name));
        }
        function.add_int64(pprof::kFunctionFilename, S(described.filename));
      }
      Flush();
    }
    {
      Writer top(buffer_);
      Writer location(top, pprof::kProfileLocation);
      location.add_uint64(pprof::kLocationId, location_id);
      Writer line(location, pprof::kLocationLine);
      line.add_uint64(pprof::kLineFunctionId, function_id);
      line.add_int64(pprof::kLineLine, described.line);
    }
    Flush();
    return ok_;
  }

  // Makes `stack`'s location ids current (packed_): its locations written if new, the ids packed as
  // a Sample's location_id field wants them. Samples come sorted by stack, so this runs once per
  // stack, not per sample (the allocation history has a sample per size a stack allocated).
  // packed_ok_ stays false when the stack's samples are to be dropped (a frame the describer does
  // not know), or memory ran out (ok_ then false too).
  void PackLocations(StackId stack) {
    packed_stack_ = stack;
    packed_ok_ = false;
    packed_.clear();
    // The innermost kMaxDepth frames, turned into location ids in place.
    std::uint64_t ids[kMaxDepth];
    StackFrames frames = snapshot_.Frames(stack, ids, kMaxDepth);
    if (!AllFramesDescribable(frames)) return;  // dropped before ids are assigned
    if (!EmitLocations(frames, ids)) {
      ok_ = false;
      return;
    }
    char varint[kMaxVarint];
    for (std::uint32_t i = 0; i < frames.depth; ++i) {
      packed_.Append(varint, static_cast<std::size_t>(PutVarint(varint, ids[i]) - varint));
    }
    if (packed_.failed()) {
      ok_ = false;
      return;
    }
    packed_ok_ = true;
  }

  // `oldest_alloc_ns` is the allocation time of the group's oldest live object (CLOCK_REALTIME,
  // as time_nanos), 0 when none is live.
  // `temporary` counts the samples of the history entry that were temporary. `sized`: whether
  // `size` is the objects' size (false for a history entry of a front end that records none),
  // written as the bytes label.
  void WriteSample(StackId stack, std::uint64_t size, std::uint64_t tag, const double values[4],
                   std::uint64_t oldest_alloc_ns, std::uint32_t temporary, bool sized) {
    if (stack != packed_stack_) PackLocations(stack);
    if (!packed_ok_) return;  // this stack's samples are dropped
    std::int64_t rounded[4];
    int value_count = 0;
    for (int i = 0; i < 4; ++i) {
      // Without allocation totals only the inuse_ pair is written; without allocation sizes no
      // alloc_space.
      if (i < 2 && !metadata_.allocation_totals) continue;
      if (i == 1 && !metadata_.allocation_sizes) continue;
      rounded[value_count++] = RoundCount(values[i]);
    }
    const std::int64_t temporary_objects = TemporaryObjects(temporary, size);
    if (metadata_.labeler != nullptr) {
      WriteLabeledSample(size, sized, tag, rounded, value_count, oldest_alloc_ns,
                         temporary_objects);
      return;
    }
    // The sample written by hand, every length known before it is written (protozero reserves
    // room for each nested length and moves the message back over what it did not use): the
    // native profile's samples are most of the profile.
    char tail[kMaxTail];
    char* p = tail;
    char values_bytes[4 * kMaxVarint];
    char* v = values_bytes;
    for (int i = 0; i < value_count; ++i) {
      v = PutVarint(v, static_cast<std::uint64_t>(rounded[i]));
    }
    p = PutField(p, pprof::kSampleValue, values_bytes, static_cast<std::size_t>(v - values_bytes));
    if (sized) p = PutNumLabel(p, bytes_label_, static_cast<std::int64_t>(size), bytes_unit_);
    if (oldest_alloc_ns != 0) {
      p = PutNumLabel(p, age_label_, AgeNanos(oldest_alloc_ns), nanoseconds_unit_);
    }
    if (temporary_objects != 0) {
      p = PutNumLabel(p, TemporaryLabel(), temporary_objects, count_unit_);
    }
    const std::size_t tail_size = static_cast<std::size_t>(p - tail);
    char head[3 * kMaxVarint + 2];
    char* h = PutTag(head, pprof::kProfileSample);
    h = PutVarint(h, FieldSize(packed_.size()) + tail_size);
    h = PutTag(h, pprof::kSampleLocationId);
    h = PutVarint(h, packed_.size());
    buffer_.Append(head, static_cast<std::size_t>(h - head));
    buffer_.Append(packed_.data(), packed_.size());
    buffer_.Append(tail, tail_size);
    Flush();
  }

  // A sample with the front end's labels (the Ruby front end's class and age), through protozero.
  void WriteLabeledSample(std::uint64_t size, bool sized, std::uint64_t tag,
                          const std::int64_t* values, int value_count,
                          std::uint64_t oldest_alloc_ns, std::int64_t temporary_objects) {
    {
      Writer top(buffer_);
      Writer sample(top, pprof::kProfileSample);
      sample.add_bytes(pprof::kSampleLocationId, packed_.data(), packed_.size());
      sample.add_packed_int64(pprof::kSampleValue, values, values + value_count);
      if (sized) {
        Writer label(sample, pprof::kSampleLabel);
        label.add_int64(pprof::kLabelKey, bytes_label_);
        label.add_int64(pprof::kLabelNum, static_cast<std::int64_t>(size));
        label.add_int64(pprof::kLabelNumUnit, bytes_unit_);
      }
      if (oldest_alloc_ns != 0) {
        Writer label(sample, pprof::kSampleLabel);
        label.add_int64(pprof::kLabelKey, age_label_);
        label.add_int64(pprof::kLabelNum, AgeNanos(oldest_alloc_ns));
        label.add_int64(pprof::kLabelNumUnit, nanoseconds_unit_);
      }
      if (temporary_objects != 0) {
        Writer label(sample, pprof::kSampleLabel);
        label.add_int64(pprof::kLabelKey, TemporaryLabel());
        label.add_int64(pprof::kLabelNum, temporary_objects);
        label.add_int64(pprof::kLabelNumUnit, count_unit_);
      }
      WriteFrontEndLabels(sample, tag);
    }
    Flush();
  }

  // The objects `temporary` samples of `size` bytes stand for: each sample's weight (the same for
  // every sample of one size while the interval stays what it is now).
  std::int64_t TemporaryObjects(std::uint32_t temporary, std::uint64_t size) const {
    if (temporary == 0) return 0;
    return RoundCount(temporary * schema::PerByteSampleWeight(size, metadata_.sample_interval));
  }
  // The label's key, interned the first time a sample has temporaries: profiles without any keep
  // the string table they had.
  std::int64_t TemporaryLabel() {
    if (temporary_label_ < 0) temporary_label_ = S(schema::kTemporaryLabel);
    return temporary_label_;
  }

  // The wire format, for the samples written by hand: varints, and length-delimited fields.
  static constexpr std::size_t kMaxVarint = 10;
  static char* PutVarint(char* p, std::uint64_t value) {
    while (value >= 0x80) {
      *p++ = static_cast<char>((value & 0x7f) | 0x80);
      value >>= 7;
    }
    *p++ = static_cast<char>(value);
    return p;
  }
  static std::size_t VarintSize(std::uint64_t value) {
    std::size_t n = 1;
    while (value >= 0x80) {
      value >>= 7;
      ++n;
    }
    return n;
  }
  // The tag of a length-delimited field (wire type 2), one byte for the fields written here.
  static char* PutTag(char* p, std::uint32_t field) {
    *p++ = static_cast<char>(field << 3 | 2);
    return p;
  }
  static std::size_t FieldSize(std::size_t payload) { return 1 + VarintSize(payload) + payload; }
  static char* PutField(char* p, std::uint32_t field, const char* payload, std::size_t size) {
    p = PutTag(p, field);
    p = PutVarint(p, size);
    std::memcpy(p, payload, size);
    return p + size;
  }
  // A Label with a key, a number and its unit (varint fields, wire type 0).
  static char* PutNumLabel(char* p, std::int64_t key, std::int64_t num, std::int64_t unit) {
    char label[3 * (1 + kMaxVarint)];
    char* l = label;
    *l++ = static_cast<char>(pprof::kLabelKey << 3);
    l = PutVarint(l, static_cast<std::uint64_t>(key));
    *l++ = static_cast<char>(pprof::kLabelNum << 3);
    l = PutVarint(l, static_cast<std::uint64_t>(num));
    *l++ = static_cast<char>(pprof::kLabelNumUnit << 3);
    l = PutVarint(l, static_cast<std::uint64_t>(unit));
    return PutField(p, pprof::kSampleLabel, label, static_cast<std::size_t>(l - label));
  }
  // The values field (4 varints) and three labels, with their tags and lengths.
  static constexpr std::size_t kMaxTail = 2 + 4 * kMaxVarint + 3 * (2 + 3 * (1 + kMaxVarint));
  static_assert(pprof::kProfileSample < 16 && pprof::kSampleValue < 16 &&
                    pprof::kSampleLabel < 16 && pprof::kLabelNumUnit < 16,
                "one-byte tags");

  // A sum of weights as the profile's integer count: rounded half up, as llround rounds the
  // non-negative values it gets, without its call; capped below INT64_MAX.
  static std::int64_t RoundCount(double value) {
    constexpr double kLargest = 9.2e18;
    double rounded = value + 0.5;
    if (!(rounded > 0)) return 0;
    return static_cast<std::int64_t>(rounded < kLargest ? rounded : kLargest);
  }

  // How long before the profile's time an object allocated at `alloc_ns` was allocated; 0 for a
  // time after it (the realtime clock was set back).
  std::int64_t AgeNanos(std::uint64_t alloc_ns) const {
    std::uint64_t now = static_cast<std::uint64_t>(metadata_.time_nanos);
    return alloc_ns < now ? static_cast<std::int64_t>(now - alloc_ns) : 0;
  }

  void WriteFrontEndLabels(Writer& sample, std::uint64_t tag) {
    SampleLabel labels[8];
    std::size_t count = metadata_.labeler->Labels(tag, labels, sizeof(labels) / sizeof(labels[0]));
    for (std::size_t i = 0; i < count; ++i) {
      Writer label(sample, pprof::kSampleLabel);
      label.add_int64(pprof::kLabelKey, S(labels[i].key));
      if (labels[i].str != nullptr) {
        label.add_int64(pprof::kLabelStr, S(labels[i].str));
      } else {
        label.add_int64(pprof::kLabelNum, labels[i].num);
        if (labels[i].num_unit != nullptr)
          label.add_int64(pprof::kLabelNumUnit, S(labels[i].num_unit));
      }
    }
  }

  // Merges the sorted live objects and the sorted allocation history into one sample per
  // (stack, size, tag): values are {alloc_objects, alloc_space, inuse_objects, inuse_space}. A
  // history entry's totals go to the group of its own tag (the native front end tags nothing: 0).
  void WriteSamples() {
    const HeapSnapshot::Object* objects = snapshot_.objects();
    const AllocationTotals* history = snapshot_.history();
    std::size_t oi = 0, hi = 0;
    const std::size_t on = snapshot_.object_count(), hn = snapshot_.history_count();
    while (ok_ && (oi < on || hi < hn)) {
      StackId stack;
      std::uint64_t size, tag = 0;
      bool take_history;
      if (hi < hn && (oi >= on || !KeyLess(objects[oi], history[hi]))) {
        stack = history[hi].stack;
        size = history[hi].size;
        tag = history[hi].tag;
        take_history = true;
      } else {
        stack = objects[oi].stack;
        size = objects[oi].size;
        tag = objects[oi].tag;
        take_history = false;
      }
      double values[4] = {0, 0, 0, 0};
      std::uint32_t temporary = 0;
      if (take_history) {
        values[0] = history[hi].objects;
        values[1] = history[hi].bytes;
        temporary = history[hi].temporary;
        ++hi;
      }
      std::uint64_t oldest = 0;
      for (; oi < on && objects[oi].stack == stack && objects[oi].size == size &&
             objects[oi].tag == tag;
           ++oi) {
        values[2] += objects[oi].weight;
        values[3] += objects[oi].weight * static_cast<double>(size);
        std::uint64_t t = objects[oi].alloc_time_ns;
        if (t != 0 && (oldest == 0 || t < oldest)) oldest = t;
      }
      if (metadata_.labeler != nullptr && !metadata_.labeler->CountsObjects(tag)) {
        values[0] = values[2] = 0;
      }
      // Without allocation totals a group whose objects all died has nothing left to show.
      if (!metadata_.allocation_totals && values[2] == 0 && values[3] == 0) continue;
      // A group of the history alone has no size when the front end records none.
      const bool sized = metadata_.allocation_sizes || !take_history || values[2] != 0;
      WriteSample(stack, size, tag, values, oldest, temporary, sized);
    }
  }

  // Whether a live object's group comes before a history entry's, in (stack, size, tag) order.
  static bool KeyLess(const HeapSnapshot::Object& o, const AllocationTotals& h) {
    if (o.stack != h.stack) return o.stack < h.stack;
    if (o.size != h.size) return o.size < h.size;
    return o.tag < h.tag;
  }

  void WriteStringTable() {
    for (std::size_t i = 0; i < strings_.size() && ok_; ++i) {
      {
        Writer top(buffer_);
        top.add_string(pprof::kProfileStringTable, strings_.at(i));
      }
      Flush();
    }
  }

  static constexpr std::uint32_t kMaxDepth = kMaxEncodedDepth;
  static constexpr std::size_t kSendBytes = 64 * 1024;

  const HeapSnapshot& snapshot_;
  const ProfileMetadata& metadata_;
  ByteSink& sink_;
  EncoderStringTable strings_;
  LocationIndex locations_;
  LocationIndex functions_;  // FrameDescriber function id -> profile function id
  ArenaBuffer buffer_;
  ArenaBuffer packed_;  // the packed location ids of packed_stack_ (PackLocations)
  StackId packed_stack_ = kInvalidStackId;
  bool packed_ok_ = false;
  bool ok_ = true;
  std::int64_t bytes_label_ = 0, bytes_unit_ = 0, age_label_ = 0, nanoseconds_unit_ = 0;
  std::int64_t count_unit_ = 0, temporary_label_ = -1;
};

}  // namespace

bool EncodeHeapProfile(const HeapSnapshot& snapshot, const ProfileMetadata& metadata,
                       MemoryResource& memory, ByteSink& sink) {
  HeapProfileEncoder encoder(snapshot, metadata, memory, sink);
  return encoder.Encode();
}

}  // namespace heaprec
