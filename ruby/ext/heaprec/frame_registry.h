// FrameRegistry: the Ruby frames heaprec has seen, as small indices a stack can hold.
//
// rb_profile_frames() hands the allocation hook one VALUE per frame (a method entry or an
// instruction sequence) and a line number. The hook may not allocate Ruby objects, so it cannot
// ask for the method's name there; it interns the VALUE instead and records the 64-bit frame
// (kRuntimeFrameBit | index << 32 | line: the bit tells it from a native address in a stack that
// has both, see native_bytes.h). Names are resolved later, in Ruby context, by ResolveNames().
//
// A method written in C has no file or line of its own; the hook interns it together with the
// nearest Ruby frame that called it (its "caller"), whose file the entry takes and whose line the
// recorded frame carries: String#initialize_copy at the line that called dup. One entry per
// (method, caller) pair. A stack cut at max_depth ends, root-most, in the marker frame
// kTruncatedIndex. Names are normalized so that the same code has one name in every process:
// addresses of anonymous classes and Rails' per-process suffixes of compiled templates are dropped
// (NormalizeFrameName).
//
// Keeping raw VALUEs is safe because the registry marks every one of them with rb_gc_mark(): a
// marked object is neither freed (code loaded by eval can otherwise be collected) nor moved by
// compaction (rb_gc_mark pins). The cost is that the registry keeps such code alive while heaprec
// runs: one entry per distinct frame, a few thousand in a large application.
//
// Threads: Intern(), Mark() and ResolveNames() run with the GVL held. Describe() runs without it
// (the profile is written with the GVL released) and only reads entries resolved before; new
// entries go into chunks that never move, so a concurrent Intern() does not disturb it.
#pragma once

#include <ruby.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "core/heap_profile_encoder.h"

namespace heaprec::ruby {

class FrameRegistry final : public FrameDescriber {
 public:
  static constexpr std::uint32_t kNoFrame = UINT32_MAX;
  // The index of the marker that ends a truncated stack: "(truncated: deeper frames omitted)".
  static constexpr std::uint32_t kTruncatedIndex = 0x7fff'fffe;  // below kRuntimeFrameBit
  // The markers that stand for the Ruby stack of a native byte sample that has none
  // (native_bytes.h): one taken during a garbage collection, one on a thread without the GVL.
  static constexpr std::uint32_t kGarbageCollectorIndex = kTruncatedIndex - 1;
  static constexpr std::uint32_t kWithoutGvlIndex = kTruncatedIndex - 2;

  FrameRegistry() = default;
  ~FrameRegistry();
  FrameRegistry(const FrameRegistry&) = delete;
  FrameRegistry& operator=(const FrameRegistry&) = delete;

  // The index of `frame` called from the Ruby frame `caller` (0 for a frame with its own file),
  // added if new; kNoFrame when out of memory. Calls malloc, never Ruby.
  std::uint32_t Intern(VALUE frame, VALUE caller);

  // The recorded form of a frame: registry index and line, marked as a runtime frame.
  static std::uint64_t Encode(std::uint32_t index, int line) {
    return kRuntimeFrameBit | (static_cast<std::uint64_t>(index) << 32) |
           static_cast<std::uint32_t>(line);
  }

  // GC mark function: marks (and so pins) every frame VALUE.
  void Mark() const;

  // Looks up the name and file of every entry added since the last call. May allocate Ruby
  // objects; never raises.
  void ResolveNames();

  bool Describe(std::uint64_t frame, Frame* out) const override;

  std::uint32_t size() const { return count_.load(std::memory_order_relaxed); }

 private:
  static constexpr std::uint32_t kChunkShift = 12;
  static constexpr std::uint32_t kChunkEntries = 1u << kChunkShift;
  static constexpr std::uint32_t kMaxChunks = 1u << 12;  // 16M distinct frames

  struct Entry {
    VALUE frame;
    VALUE caller;               // 0, or the Ruby frame whose file a C method takes
    std::uint32_t function_id;  // valid once resolved
    std::string name;           // "Foo#bar", "block in Foo#bar", "Integer#times"
    std::string file;           // a C method's caller's; "" for one with no Ruby caller
  };

  Entry& At(std::uint32_t index) const {
    return chunks_[index >> kChunkShift][index & (kChunkEntries - 1)];
  }
  bool GrowSlots();

  Entry* chunks_[kMaxChunks] = {};
  std::atomic<std::uint32_t> count_{0};
  std::atomic<std::uint32_t> resolved_{0};  // entries below this have names (release/acquire)
  std::uint32_t* slots_ = nullptr;          // open addressing: 1 + index, 0 = empty
  std::size_t slot_count_ = 0;
  std::unordered_map<std::string, std::uint32_t> function_ids_;  // "name\nfile" -> id
};

// `name` as one name across processes: "0x" addresses of 8 or more hex digits become "0x..."
// ("#<Class:0x...>#call"), and the suffix Rails appends to a compiled template's method
// ("__<hash>_<id>", "___<hash>_<id>" when the hash is negative, its "-" made "_") is dropped.
std::string NormalizeFrameName(std::string name);

}  // namespace heaprec::ruby
