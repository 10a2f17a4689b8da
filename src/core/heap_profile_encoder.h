// Encodes a HeapSnapshot as a pprof profile (profile.proto), streamed to a ByteSink from inside the
// profiled process. (The CLI's own pprof writer, for the profile model it reads, symbolizes and
// rewrites, is profile/pprof_writer.h: STL and exceptions, on the other side of the file.) The
// profile follows Go's heap profile conventions, in the names of schema/profile_schema.h:
//
//   sample_type  alloc_objects/count  alloc_space/bytes  inuse_objects/count  inuse_space/bytes
//   period_type  space/bytes, period = sampling interval, default_sample_type = inuse_space
//                (ProfileMetadata::default_sample_type: alloc_space for the HTTP endpoint's allocs)
//   drop_frames  schema::kRuntimeFrames, so that pprof charges samples to the user's code, as
//                heaprec's reports do (ProfileMetadata::drop_frames: another for a front end)
//   keep_frames  schema::kStartFrames, the start-up frames from which pprof's pruning starts
//   (without ProfileMetadata::allocation_sizes: alloc_objects, inuse_objects, inuse_space)
//   one sample per (stack, requested size), with a numeric label bytes = that size and, when some
//   of its objects are live, a numeric label age_ns = how long before the profile's time_nanos the
//   oldest of them was allocated (unit nanoseconds: `pprof -tags` shows a duration), so reports can
//   show how long a site has been holding memory
//
// Values are sums of per-object weights (each object unbiased at sample time), rounded once per
// sample. Native frames are written as locations with an address and the mapping that contains it;
// symbolization happens later, outside the profiled process (with an AddressNamer, the function
// names of the files' symbol tables are added). A language runtime's frames are
// already symbolic: with a FrameDescriber each location gets a line and a function instead, and a
// SampleLabeler adds the front end's own labels (Ruby: the object's class and GC age). The stream
// is written top-level field by top-level field, so memory stays bounded by the location index and
// the largest single message.
//
// Runs in the profiled process: no malloc (memory from the MemoryResource), no locks of its own, no
// exceptions. Not signal-safe.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/byte_sink.h"
#include "core/heap_snapshot.h"
#include "core/memory_resource.h"
#include "schema/profile_schema.h"
#include "schema/runtime_frames.h"

namespace heaprec {

struct ProfileMapping {
  std::uint64_t start;
  std::uint64_t limit;
  std::uint64_t file_offset;
  const char* path;
  const char* build_id;  // lowercase hex, "" when unknown
};

// The most frames of one stack a profile keeps (the root-most are cut beyond). A front end that
// marks truncation keeps one fewer of its own and adds its marker.
inline constexpr std::uint32_t kMaxEncodedDepth = 1024;

// A frame with this bit set is a language runtime's (described by the FrameDescriber); a frame
// without it is a native return address (no user-space address has it). One stack may hold both:
// the native frames of an allocation and, root-ward of them, the interpreter's frames that led to
// it (the Ruby front end's native byte samples, docs/design/ruby.md).
inline constexpr std::uint64_t kRuntimeFrameBit = std::uint64_t{1} << 63;
inline bool IsRuntimeFrame(std::uint64_t frame) { return (frame & kRuntimeFrameBit) != 0; }

// Describes symbolic frames (an interpreter's methods with file and line): the frames with
// kRuntimeFrameBit. The strings must stay valid until the profile is written.
class FrameDescriber {
 public:
  struct Frame {
    std::uint64_t function_id;  // the same id for every frame of one function; below 2^63
    const char* name;
    // Written only when not null. Go's pprof "demangles" a function whose system_name equals its
    // name, and its C++ heuristics reduce Ruby's "<main>" or "<class:Foo>" to nothing.
    const char* system_name;
    const char* filename;
    std::int64_t line;
  };
  // Fills `out` for `frame` (an opaque value recorded in a stack); false drops the sample.
  virtual bool Describe(std::uint64_t frame, Frame* out) const = 0;

 protected:
  ~FrameDescriber() = default;
};

// Names native frames, for a profile that is read where it cannot be symbolized (the HTTP
// endpoint's: preload/http/served_symbols.h). The strings must stay valid until the profile is
// written.
class AddressNamer {
 public:
  static constexpr std::size_t kNoMapping = SIZE_MAX;
  // The name of the function containing `address` (in metadata.mappings[mapping], or kNoMapping
  // when no mapping holds it), and a key the same for every address of that function (and for no
  // other); null when it has none.
  virtual const char* Name(std::uint64_t address, std::size_t mapping,
                           std::uint64_t* function_key) const = 0;
  // Whether some frame in metadata.mappings[index] has a name: the mapping is marked
  // has_functions, which tells pprof not to symbolize it again.
  virtual bool NamesMapping(std::size_t index) const = 0;

 protected:
  ~AddressNamer() = default;
};

struct SampleLabel {
  const char* key;
  const char* str;  // a string label when not null, otherwise numeric
  std::int64_t num;
  const char* num_unit;  // may be null
};

// Turns a HeapSnapshot::Object tag into labels. The strings must stay valid until the profile is
// written.
class SampleLabeler {
 public:
  // Writes at most `capacity` labels for objects tagged `tag`; returns how many.
  virtual std::size_t Labels(std::uint64_t tag, SampleLabel* out, std::size_t capacity) const = 0;
  // Whether objects tagged `tag` count in the *_objects sample types. False for a front end's
  // entries that stand for bytes only (Ruby: the native blocks behind its objects, whose bytes
  // count in inuse_space while inuse_objects counts Ruby objects).
  virtual bool CountsObjects(std::uint64_t tag) const {
    (void)tag;
    return true;
  }

 protected:
  ~SampleLabeler() = default;
};

struct ProfileMetadata {
  std::uint64_t sample_interval;
  std::int64_t time_nanos;
  std::int64_t duration_nanos;
  const ProfileMapping* mappings;  // sorted by start, not overlapping
  std::size_t mapping_count;
  const char* const* comments;
  std::size_t comment_count;
  // What the interval counts: bytes for the native sampler, objects for a per-object sampler.
  const char* period_type = schema::kPerBytePeriodType;
  const char* period_unit = schema::kBytesUnit;
  // Writes alloc_objects/alloc_space from the allocation history; a front end that keeps no
  // history writes only the inuse_ types.
  bool allocation_totals = true;
  // Whether the history's sizes are the objects' sizes. A front end that cannot know an object's
  // size when it is allocated (Ruby: a string is filled in after it is created) records size 0 and
  // sets this false: the profile then has no alloc_space (sample types alloc_objects,
  // inuse_objects, inuse_space) and the history's samples no bytes label.
  bool allocation_sizes = true;
  // The sample type pprof shows first: inuse_space, or alloc_space for Go's /debug/pprof/allocs
  // (which needs allocation_totals).
  const char* default_sample_type = schema::kInuseSpace;
  const FrameDescriber* frames = nullptr;  // null: every frame is an address
  const SampleLabeler* labeler = nullptr;  // null: no labels beyond bytes and age_ns
  // Native frames: each location named by it gets a line with its function (no file, no line
  // number). Null: addresses only. Its function keys and the FrameDescriber's function ids are
  // kept apart by the encoder.
  const AddressNamer* names = nullptr;
  // pprof's drop_frames and keep_frames (one regular expression each, matched against whole
  // names): the frames that are not sites, and the start-up frames pprof must see as the user's.
  // A front end whose sites are an interpreter's frames drops every native frame
  // (schema/runtime_frames.h).
  const char* drop_frames = schema::kRuntimeFrames;
  const char* keep_frames = schema::kStartFrames;
};

// Encodes `snapshot` (sorted with SortByStackAndSize) into `sink`. Returns false if the sink failed
// or the profiler's memory ran out.
bool EncodeHeapProfile(const HeapSnapshot& snapshot, const ProfileMetadata& metadata,
                       MemoryResource& memory, ByteSink& sink);

}  // namespace heaprec
