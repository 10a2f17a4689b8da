#include "frame_registry.h"

#include <ruby/debug.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include "core/hash.h"

namespace heaprec::ruby {
namespace {

// The markers, with function ids beyond every id ResolveNames hands out (they count from 1).
struct Marker {
  std::uint32_t index;
  const char* name;
};
constexpr Marker kMarkers[] = {
    {FrameRegistry::kTruncatedIndex, "(truncated: deeper frames omitted)"},
    {FrameRegistry::kGarbageCollectorIndex, "(garbage collector)"},
    {FrameRegistry::kWithoutGvlIndex, "(no Ruby stack: a thread without the GVL)"},
};

std::string CopyString(VALUE string, const char* fallback) {
  if (!RB_TYPE_P(string, T_STRING)) return fallback;
  return std::string(RSTRING_PTR(string), static_cast<std::size_t>(RSTRING_LEN(string)));
}

std::size_t SlotOf(VALUE frame, VALUE caller) {
  return MixBits(frame ^ (caller * 0x9e3779b97f4a7c15ull));
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool IsWordChar(char c) {
  const char lower = static_cast<char>(c | 0x20);
  return IsDigit(c) || c == '_' || (lower >= 'a' && lower <= 'z');
}

// The end of a run of digits from `at` (at itself when there is none).
std::size_t SkipDigits(const std::string& s, std::size_t at) {
  while (at < s.size() && IsDigit(s[at])) ++at;
  return at;
}

// The end of a Rails template suffix that starts at `at` ("__123_456" or "___-123_456" ending the
// word), or 0 when none starts there.
std::size_t TemplateSuffixEnd(const std::string& s, std::size_t at) {
  std::size_t p = at;
  while (p < s.size() && s[p] == '_') ++p;
  if (p - at < 2 || p - at > 3) return 0;
  if (p < s.size() && s[p] == '-') ++p;
  std::size_t hash_end = SkipDigits(s, p);
  if (hash_end == p || hash_end >= s.size() || s[hash_end] != '_') return 0;
  std::size_t id_end = SkipDigits(s, hash_end + 1);
  if (id_end == hash_end + 1 || (id_end < s.size() && IsWordChar(s[id_end]))) return 0;
  return id_end;
}

}  // namespace

std::string NormalizeFrameName(std::string name) {
  for (std::size_t at = name.find("0x"); at != std::string::npos; at = name.find("0x", at + 2)) {
    std::size_t end = at + 2;
    while (end < name.size() && IsHexDigit(name[end])) ++end;
    if (end - at - 2 >= 8) name.replace(at + 2, end - at - 2, "...");
  }
  for (std::size_t at = name.find("__"); at != std::string::npos; at = name.find("__", at + 1)) {
    if (std::size_t end = TemplateSuffixEnd(name, at); end != 0) name.erase(at, end - at);
  }
  return name;
}

FrameRegistry::~FrameRegistry() {
  for (Entry* chunk : chunks_) delete[] chunk;
  std::free(slots_);
}

std::uint32_t FrameRegistry::Intern(VALUE frame, VALUE caller) {
  std::uint32_t count = count_.load(std::memory_order_relaxed);
  if ((count + 1) * 2 > slot_count_ && !GrowSlots()) return kNoFrame;
  std::size_t mask = slot_count_ - 1;
  std::size_t slot = SlotOf(frame, caller) & mask;
  for (; slots_[slot] != 0; slot = (slot + 1) & mask) {
    const Entry& entry = At(slots_[slot] - 1);
    if (entry.frame == frame && entry.caller == caller) return slots_[slot] - 1;
  }
  std::uint32_t chunk = count >> kChunkShift;
  if (chunk >= kMaxChunks) return kNoFrame;
  if (chunks_[chunk] == nullptr) {
    chunks_[chunk] = new (std::nothrow) Entry[kChunkEntries];
    if (chunks_[chunk] == nullptr) return kNoFrame;
  }
  At(count).frame = frame;
  At(count).caller = caller;
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
    std::size_t slot = SlotOf(At(i).frame, At(i).caller) & (slot_count - 1);
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
  for (std::uint32_t i = 0; i < count; ++i) {
    rb_gc_mark(At(i).frame);
    if (At(i).caller != 0) rb_gc_mark(At(i).caller);
  }
}

void FrameRegistry::ResolveNames() {
  std::uint32_t count = count_.load(std::memory_order_relaxed);
  for (std::uint32_t i = resolved_.load(std::memory_order_relaxed); i < count; ++i) {
    Entry& entry = At(i);
    // full_label qualifies the method with its class ("Foo#bar", "Foo.baz", "block in Foo#bar");
    // path is the file as it was loaded, as in backtraces; methods written in C have none.
    entry.name =
        NormalizeFrameName(CopyString(rb_profile_frame_full_label(entry.frame), "<unknown>"));
    entry.file = CopyString(rb_profile_frame_path(entry.frame), "");
    if (entry.file.empty() && entry.caller != 0) {
      entry.file = CopyString(rb_profile_frame_path(entry.caller), "");
    }
    std::string key = entry.name + '\n' + entry.file;
    auto [it, inserted] =
        function_ids_.emplace(key, static_cast<std::uint32_t>(function_ids_.size() + 1));
    entry.function_id = it->second;
  }
  resolved_.store(count, std::memory_order_release);
}

bool FrameRegistry::Describe(std::uint64_t frame, Frame* out) const {
  std::uint32_t index = static_cast<std::uint32_t>((frame & ~kRuntimeFrameBit) >> 32);
  for (const Marker& marker : kMarkers) {
    if (index == marker.index) {
      *out = {UINT64_MAX - (kTruncatedIndex - index), marker.name, nullptr, "", 0};
      return true;
    }
  }
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
