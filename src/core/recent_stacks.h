// RecentStacks: a direct-mapped table of recently interned stacks (hash of all the frames -> id),
// in front of something slower to ask: the stack table's trie, and, per recorder lane, the stack
// table itself behind its lock.
//
//   entries_[hash % entries] ──▶ {hash, epoch, start, id, depth}
//   ring_[start % ring_frames ...] ──▶ the entry's frames, to compare with the stack looked up
//
// A hit is checked by comparing the frames with the copy kept for the entry; the entry found or
// remembered last is tried first, without hashing. The copies are written one after another into
// a ring, so that a process which samples a hundred stacks touches the ring's first pages only,
// not a page for each entry (entries land by hash). A copy never wraps around the ring's end; it
// is intact while fewer than a ring's worth of frames were written after its start.
//
// An entry also holds the owner's epoch when it was made: an owner whose ids can be recycled (the
// stack table frees nodes) moves its epoch on at every free, and entries of an older epoch miss.
//
// Thread safety: none; the owner's lock covers every call. Storage comes from the owner (Attach),
// which frees it: the table allocates nothing and never calls malloc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace heaprec {

class RecentStacks {
 public:
  struct Entry {
    std::uint64_t hash;   // Hash() of the stack
    std::uint64_t epoch;  // the owner's when it was made; 0: empty
    std::uint64_t start;  // where its frames' copy begins in the ring, in frames written ever
    std::uint32_t id;
    std::uint32_t depth;
  };

  // Four multiply chains side by side, a frame each in turn, then mixed: every bit of every frame
  // reaches the top and the bottom bits.
  static std::uint64_t Hash(const std::uint64_t* frames, std::uint32_t depth);

  // `entries` zeroed, `entry_count` a power of two; `ring` of `ring_frames` (a power of two, at
  // least the deepest stack remembered), any contents.
  void Attach(Entry* entries, std::size_t entry_count, std::uint64_t* ring,
              std::size_t ring_frames);
  // The deepest stack the ring can keep.
  std::size_t max_depth() const { return ring_frames_; }

  // The id remembered for this stack under `epoch`, or 0 when none is, and the stack's Hash.
  struct Found {
    std::uint32_t id;
    std::uint64_t hash;
  };
  Found Find(const std::uint64_t* frames, std::uint32_t depth, std::uint64_t epoch) {
    // A program that allocates from one stack again and again (a loop) finds it without hashing.
    if (last_ != nullptr && Holds(*last_, frames, depth, epoch)) return {last_->id, last_->hash};
    return FindByHash(frames, depth, epoch);
  }
  // Remembers `id` for the stack, in place of whatever its entry held. depth <= max_depth(), epoch
  // not 0.
  void Remember(std::uint64_t hash, std::uint32_t id, const std::uint64_t* frames,
                std::uint32_t depth, std::uint64_t epoch);

 private:
  Entry& EntryFor(std::uint64_t hash) const { return entries_[hash & (entry_count_ - 1)]; }
  // Whether `entry` holds this stack: made under `epoch`, its copy intact and equal to `frames`.
  bool Holds(const Entry& entry, const std::uint64_t* frames, std::uint32_t depth,
             std::uint64_t epoch) const {
    // Gone: empty, made under another epoch, or frames written since came round the ring to it.
    if (entry.epoch != epoch || entry.depth != depth || written_ - entry.start > ring_frames_) {
      return false;
    }
    const std::uint64_t* copy = ring_ + (entry.start & (ring_frames_ - 1));
    return std::memcmp(copy, frames, depth * sizeof(*frames)) == 0;
  }
  Found FindByHash(const std::uint64_t* frames, std::uint32_t depth, std::uint64_t epoch);

  Entry* entries_ = nullptr;
  std::size_t entry_count_ = 0;
  std::uint64_t* ring_ = nullptr;
  std::size_t ring_frames_ = 0;
  std::uint64_t written_ = 0;  // frames written to the ring ever, padding included
  Entry* last_ = nullptr;      // the entry found or remembered last
};

}  // namespace heaprec
