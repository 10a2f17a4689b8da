// StackTable: call stacks interned once as paths in a trie, referenced by a small id,
// reference-counted.
//
// A stack is a sequence of opaque 64-bit frames, leaf first: program counters for the preload front
// end, interned frame ids for a language runtime. Stacks are stored as a trie rooted at the
// outermost frame: a node is (parent node, frame), found through a hash of the pair, and a stack's
// id is the node of its innermost frame. Identical stacks share one node, and stacks sharing their
// outer frames (main, the event loop, a recursion) share those nodes, so a million live objects
// allocated from a few thousand deep stacks cost one node per distinct (prefix, frame).
//
//   chunks_[id / kChunkNodes] ──▶ [Node Node Node ...]   nodes never move once created
//   buckets_[hash(parent, frame) % n] ──▶ id ──next──▶ id ──▶ 0
//   node 1: the root, the empty stack; every other node's parent chain ends there
//
// In front of the trie, a table of recently interned stacks (recent_stacks.h: a hash of all the
// frames -> node) lets Intern skip the walk down the trie, one hash lookup per frame, for the
// stacks a program allocates from again and again.
//
// Each node counts its references (Intern, Ref: the stack ending there is in use) and its children.
// A node with neither leaves the trie and releases its parent's child count, and so on upwards:
// nobody's stack is kept once nothing uses it, and shared prefixes stay as long as one stack
// through them does.
//
// Thread safety: not synchronized. One lock (the recorder's) must cover every call except
// CopyFrames(), ForEachFrame() and Depth(), which may be called without the lock for an id that is
// referenced or pinned (see Pin) by the caller: a node's frame and parent never change or move
// while it can be reached, and its ancestors live at least as long as it does; and
// UnrefIfNotLast(), which changes a count atomically but never to zero.
//
// Memory comes from the MemoryResource given at construction; no call throws or calls malloc.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/memory_resource.h"
#include "core/recent_stacks.h"

namespace heaprec {

class LiveSetObserver;  // live_set_observer.h

using StackId = std::uint32_t;
inline constexpr StackId kInvalidStackId = 0;

struct StackFrames {
  const std::uint64_t* frames;
  std::uint32_t depth;
};

class StackTable {
 public:
  explicit StackTable(MemoryResource& memory);
  ~StackTable();
  StackTable(const StackTable&) = delete;
  StackTable& operator=(const StackTable&) = delete;

  // Finds or creates the stack and adds one reference. kInvalidStackId when out of memory.
  StackId Intern(const std::uint64_t* frames, std::uint32_t depth);
  // Finds or creates the stack without adding a reference, for a caller that keeps it from being
  // freed otherwise (the recorder, whose allocation history references every stack it counts). A
  // node nobody references is only freed by an Unref. kInvalidStackId when out of memory.
  StackId InternUnreferenced(const std::uint64_t* frames, std::uint32_t depth);
  void Ref(StackId id);
  // Drops one reference; at zero the stack leaves the table (its id may be reused), unless the
  // table is pinned, in which case its frames stay readable until the last Unpin().
  void Unref(StackId id);
  // Drops one reference without the lock if it is not the last one (the common case: the
  // allocation history keeps one on every stack it has seen); false, doing nothing, when it may be,
  // and the caller then calls Unref under the lock. The one call allowed without the lock besides
  // the readers below, for a referenced id: counts only ever reach 0 (and nodes leave) under it.
  bool UnrefIfNotLast(StackId id);

  // While pinned, no node is freed: stacks whose count drops to zero leave the index (a new intern
  // of the same stack makes a new node) but keep their frames until the last Unpin(). A
  // serialization that copied ids out of the live table pins the table so those ids stay valid
  // without a reference per object.
  void Pin();
  void Unpin();

  // Writes the stack's innermost min(depth, capacity) frames, leaf first, to `out`; returns how
  // many. Walks the stack's nodes: one dependent load per frame.
  std::uint32_t CopyFrames(StackId id, std::uint64_t* out, std::uint32_t capacity) const;
  // Calls visit(frame) leaf first until it returns false; returns false if it did.
  template <typename Visitor>
  bool ForEachFrame(StackId id, Visitor&& visit) const;
  // ForEachFrame over many stacks, each node once: `seen` is a bitmap of (bound + 63) / 64 words,
  // bit `id` set once node `id` was visited; the walk stops, returning true, at a node already
  // seen (its outer frames were visited with it). Nodes from `bound` on are visited every time.
  template <typename Visitor>
  bool ForEachFrameOnce(StackId id, std::uint64_t* seen, std::uint32_t bound,
                        Visitor&& visit) const;
  // One more than the highest id handed out so far. Under the lock.
  std::uint32_t id_bound() const { return next_unused_id_; }
  std::uint32_t Depth(StackId id) const;

  // Tells `observer` (or nobody) of every node created from now on, and at once of every node
  // there is. Under the same lock as every other call.
  void Observe(LiveSetObserver* observer);

  std::uint32_t RefCount(StackId id) const { return Refs(At(id)).load(std::memory_order_relaxed); }
  std::size_t size() const { return stacks_; }       // stacks currently referenced
  std::size_t node_count() const { return nodes_; }  // nodes in the index (the root is not)

 private:
  static constexpr std::uint32_t kChunkShift = 12;
  static constexpr std::uint32_t kChunkNodes = 1u << kChunkShift;
  static constexpr std::uint32_t kMaxChunks = 1u << 14;  // 67M nodes
  static constexpr std::uint32_t kPrefaultNodes = 512;   // 12 KiB of nodes made present at once
  static constexpr StackId kRootId = 1;

  struct Node {
    std::uint64_t frame;
    StackId parent;          // kInvalidStackId for the root
    StackId next;            // next in the hash chain, or in the free / pending list
    std::uint32_t refs;      // references to the stack ending here
    std::uint32_t children;  // nodes whose parent this is (pending ones included)
  };

  Node& At(StackId id) const { return chunks_[id >> kChunkShift][id & (kChunkNodes - 1)]; }
  // Reference counts are atomic: UnrefIfNotLast changes them without the lock.
  static std::atomic_ref<std::uint32_t> Refs(Node& node) {
    return std::atomic_ref<std::uint32_t>(node.refs);
  }
  static std::uint64_t HashEdge(StackId parent, std::uint64_t frame);
  StackId InternThroughTrie(const std::uint64_t* frames, std::uint32_t depth);
  std::size_t Bucket(std::uint64_t hash) const { return hash >> bucket_shift_; }
  bool EnsureRoot();
  StackId NewId();
  bool GrowBuckets();
  StackId FindChild(StackId parent, std::uint64_t frame) const;
  StackId AddChild(StackId parent, std::uint64_t frame);
  void Unlink(StackId id);
  // Frees `id` (out of the index already) and then every ancestor left with neither references
  // nor children.
  void ReleaseUpwards(StackId id);

  MemoryResource& memory_;
  LiveSetObserver* observer_ = nullptr;
  // The chunk directory (kMaxChunks pointers, 128 KiB), allocated zeroed with the root: a member
  // array would be cleared by every process's constructor, 32 pages of memory touched at start-up
  // for nothing when the process samples little.
  Node** chunks_ = nullptr;
  std::uint32_t next_unused_id_ = kRootId;  // id 0 is kInvalidStackId
  StackId free_ids_ = kInvalidStackId;
  StackId pending_ids_ =
      kInvalidStackId;  // left the index while pinned, released at the last Unpin
  std::uint32_t pins_ = 0;
  StackId* buckets_ = nullptr;
  std::size_t bucket_count_ = 0;  // a power of two
  int bucket_shift_ = 64;         // 64 - log2(bucket_count_)
  std::size_t nodes_ = 0;         // nodes in the index
  std::size_t stacks_ = 0;        // nodes with references

  static constexpr std::uint32_t kRecentMaxDepth = 128;  // the preload library's default depth
  static constexpr std::size_t kRecentStacks = 256;      // 8 KiB, allocated with the root
  // The ring of the entries' frames: as many as kRecentStacks of the deepest stacks (256 KiB),
  // allocated with the root; its pages are touched only as it fills (recent_stacks.h).
  static constexpr std::size_t kRecentFrames = kRecentStacks * kRecentMaxDepth;
  RecentStacks recent_;
  RecentStacks::Entry* recent_entries_ = nullptr;
  std::uint64_t* recent_frames_ = nullptr;
  std::uint64_t frees_ = 1;  // nodes that left the index so far, plus one (0 marks an empty entry)
};

template <typename Visitor>
bool StackTable::ForEachFrame(StackId id, Visitor&& visit) const {
  for (; id != kRootId; id = At(id).parent) {
    if (!visit(At(id).frame)) return false;
  }
  return true;
}

template <typename Visitor>
bool StackTable::ForEachFrameOnce(StackId id, std::uint64_t* seen, std::uint32_t bound,
                                  Visitor&& visit) const {
  for (; id != kRootId; id = At(id).parent) {
    if (id < bound) {
      const std::uint64_t bit = std::uint64_t{1} << (id & 63);
      if ((seen[id >> 6] & bit) != 0) return true;
      seen[id >> 6] |= bit;
    }
    if (!visit(At(id).frame)) return false;
  }
  return true;
}

}  // namespace heaprec
