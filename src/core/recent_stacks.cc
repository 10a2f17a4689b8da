#include "core/recent_stacks.h"

#include <cstring>

namespace heaprec {

// Four independent multiply chains, a frame each in turn: in exact mode a stack is hashed at every
// allocation, and one chain's multiplies, each waiting for the last, were 2% of python3's CPU.
std::uint64_t RecentStacks::Hash(const std::uint64_t* frames, std::uint32_t depth) {
  constexpr std::uint64_t kOdd = 0x9fb21c651e98df25ULL;
  std::uint64_t a = 0x243f6a8885a308d3ULL ^ depth, b = 0x13198a2e03707344ULL;
  std::uint64_t c = 0xa4093822299f31d0ULL, d = 0x082efa98ec4e6c89ULL;
  std::uint32_t i = 0;
  for (; i + 4 <= depth; i += 4) {
    a = (a ^ frames[i]) * kOdd;
    b = (b ^ frames[i + 1]) * kOdd;
    c = (c ^ frames[i + 2]) * kOdd;
    d = (d ^ frames[i + 3]) * kOdd;
  }
  if (i < depth) a = (a ^ frames[i++]) * kOdd;
  if (i < depth) b = (b ^ frames[i++]) * kOdd;
  if (i < depth) c = (c ^ frames[i]) * kOdd;
  // Rotated apart so that equal frames in two chains do not cancel; the last multiply and shift
  // bring every bit down to the low ones, which index the table.
  auto rotate = [](std::uint64_t x, int bits) { return x << bits | x >> (64 - bits); };
  const std::uint64_t h = (a ^ rotate(b, 16) ^ rotate(c, 32) ^ rotate(d, 48)) * kOdd;
  return h ^ (h >> 29);
}

void RecentStacks::Attach(Entry* entries, std::size_t entry_count, std::uint64_t* ring,
                          std::size_t ring_frames) {
  entries_ = entries;
  entry_count_ = entry_count;
  ring_ = ring;
  ring_frames_ = ring_frames;
  written_ = 0;
  last_ = nullptr;
}

RecentStacks::Found RecentStacks::FindByHash(const std::uint64_t* frames, std::uint32_t depth,
                                             std::uint64_t epoch) {
  const std::uint64_t hash = Hash(frames, depth);
  Entry& entry = EntryFor(hash);
  if (entry.hash != hash || !Holds(entry, frames, depth, epoch)) return {0, hash};
  last_ = &entry;
  return {entry.id, hash};
}

void RecentStacks::Remember(std::uint64_t hash, std::uint32_t id, const std::uint64_t* frames,
                            std::uint32_t depth, std::uint64_t epoch) {
  std::uint64_t offset = written_ & (ring_frames_ - 1);
  if (offset + depth > ring_frames_) {  // a copy never wraps: start again at the ring's start
    written_ += ring_frames_ - offset;
    offset = 0;
  }
  last_ = &EntryFor(hash);
  *last_ = {hash, epoch, written_, id, depth};
  std::memcpy(ring_ + offset, frames, depth * sizeof(*frames));
  written_ += depth;
}

}  // namespace heaprec
