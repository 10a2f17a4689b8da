#include "frame_registry.h"

#include <ruby/debug.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include "core/hash.h"

namespace heaprec::ruby {
namespace {

std::string CopyString(VALUE string, const char* fallback) {
  if (!RB_TYPE_P(string, T_STRING)) return fallback;
  return std::string(RSTRING_PTR(string), static_cast<std::size_t>(RSTRING_LEN(string)));
}

}  // namespace

FrameRegistry::~FrameRegistry() {
  for (Entry* chunk : chunks_) delete[] chunk;
  std::free(slots_);
}

std::uint32_t FrameRegistry::Intern(VALUE frame) {
  std::uint32_t count = count_.load(std::memory_order_relaxed);
  if ((count + 1) * 2 > slot_count_ && !GrowSlots()) return kNoFrame;
  std::size_t mask = slot_count_ - 1;
  std::size_t slot = MixBits(frame) & mask;
  for (; slots_[slot] != 0; slot = (slot + 1) & mask) {
    if (At(slots_[slot] - 1).frame == frame) return slots_[slot] - 1;
  }
  std::uint32_t chunk = count >> kChunkShift;
  if (chunk >= kMaxChunks) return kNoFrame;
  if (chunks_[chunk] == nullptr) {
    chunks_[chunk] = new (std::nothrow) Entry[kChunkEntries];
    if (chunks_[chunk] == nullptr) return kNoFrame;
  }
  At(count).frame = frame;
  slots_[slot] = count + 1;
  count_.store(count + 1, std::memory_order_relaxed);
  return count;
}

bool FrameRegistry::GrowSlots() {
  std::size_t slot_count = slot_count_ == 0 ? 1024 : slot_count_ * 2;
  auto* fresh = static_cast<std::uint32_t*>(std::calloc(slot_count, sizeof(std::uint32_t)));
  if (fresh == nullptr) return false;
  std::uint32_t count = count_.load(std::memory_order_relaxed);
  for (std::uint32_t i = 0; i < count; ++i) {
    std::size_t slot = MixBits(At(i).frame) & (slot_count - 1);
    while (fresh[slot] != 0) slot = (slot + 1) & (slot_count - 1);
    fresh[slot] = i + 1;
  }
  std::free(slots_);
  slots_ = fresh;
  slot_count_ = slot_count;
  return true;
}

void FrameRegistry::Mark() const {
  std::uint32_t count = count_.load(std::memory_order_relaxed);
  for (std::uint32_t i = 0; i < count; ++i) rb_gc_mark(At(i).frame);
}

void FrameRegistry::ResolveNames() {
  std::uint32_t count = count_.load(std::memory_order_relaxed);
  for (std::uint32_t i = resolved_.load(std::memory_order_relaxed); i < count; ++i) {
    Entry& entry = At(i);
    // full_label qualifies the method with its class ("Foo#bar", "Foo.baz", "block in Foo#bar");
    // path is the file as it was loaded, as in backtraces; methods written in C have none.
    entry.name = CopyString(rb_profile_frame_full_label(entry.frame), "<unknown>");
    entry.file = CopyString(rb_profile_frame_path(entry.frame), "");
    std::string key = entry.name + '\n' + entry.file;
    auto [it, inserted] =
        function_ids_.emplace(key, static_cast<std::uint32_t>(function_ids_.size() + 1));
    entry.function_id = it->second;
  }
  resolved_.store(count, std::memory_order_release);
}

bool FrameRegistry::Describe(std::uint64_t frame, Frame* out) const {
  std::uint32_t index = static_cast<std::uint32_t>(frame >> 32);
  if (index >= resolved_.load(std::memory_order_acquire)) return false;
  const Entry& entry = At(index);
  out->function_id = entry.function_id;
  out->name = entry.name.c_str();
  out->system_name = nullptr;  // Ruby names are not mangled; see FrameDescriber::Frame
  out->filename = entry.file.c_str();
  out->line = static_cast<std::int32_t>(frame & 0xffffffffu);
  return true;
}

}  // namespace heaprec::ruby
