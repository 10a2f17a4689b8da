// FrameRegistry: the Ruby frames heaprec has seen, as small indices a stack can hold.
//
// rb_profile_frames() hands the allocation hook one VALUE per frame (a method entry or an
// instruction sequence) and a line number. The hook may not allocate Ruby objects, so it cannot
// ask for the method's name there; it interns the VALUE instead and records the 64-bit frame
// (index << 32 | line). Names are resolved later, in Ruby context, by ResolveNames().
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

  FrameRegistry() = default;
  ~FrameRegistry();
  FrameRegistry(const FrameRegistry&) = delete;
  FrameRegistry& operator=(const FrameRegistry&) = delete;

  // The index of `frame`, added if new; kNoFrame when out of memory. Calls malloc, never Ruby.
  std::uint32_t Intern(VALUE frame);

  // The recorded form of a frame: registry index and line.
  static std::uint64_t Encode(std::uint32_t index, int line) {
    return (static_cast<std::uint64_t>(index) << 32) | static_cast<std::uint32_t>(line);
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
    std::uint32_t function_id;  // valid once resolved
    std::string name;           // "Foo#bar", "block in Foo#bar", "Integer#times"
    std::string file;           // "" for methods written in C
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

}  // namespace heaprec::ruby
