#include "core/stack_table.h"

#include <cstring>

#include "core/live_set_observer.h"
#include "core/prefault.h"

namespace heaprec {

StackTable::StackTable(MemoryResource& memory) : memory_(memory) {}

StackTable::~StackTable() {
  for (std::uint32_t c = 0; chunks_ != nullptr && c < kMaxChunks && chunks_[c] != nullptr; ++c) {
    memory_.DeallocateArray(chunks_[c], kChunkNodes);
  }
  memory_.DeallocateArray(chunks_, kMaxChunks);
  memory_.DeallocateArray(buckets_, bucket_count_);
  memory_.DeallocateArray(recent_entries_, kRecentStacks);
  memory_.DeallocateArray(recent_frames_, kRecentFrames);
}

// One multiply per trie edge (Intern hashes every frame of every sampled stack). Bucket() takes the
// product's top bits, which depend on every bit of the frame and of the parent's id.
std::uint64_t StackTable::HashEdge(StackId parent, std::uint64_t frame) {
  return (frame ^ (std::uint64_t{parent} << 40 | parent)) * 0x9fb21c651e98df25ULL;
}

bool StackTable::GrowBuckets() {
  std::size_t new_count = bucket_count_ == 0 ? 1024 : bucket_count_ * 2;
  StackId* fresh = memory_.AllocateZeroedArray<StackId>(new_count);
  if (fresh == nullptr) return false;
  int new_shift = 64;
  for (std::size_t n = new_count; n > 1; n >>= 1) --new_shift;
  for (std::size_t b = 0; b < bucket_count_; ++b) {
    StackId id = buckets_[b];
    while (id != kInvalidStackId) {
      Node& node = At(id);
      StackId next = node.next;
      std::size_t nb = HashEdge(node.parent, node.frame) >> new_shift;
      node.next = fresh[nb];
      fresh[nb] = id;
      id = next;
    }
  }
  memory_.DeallocateArray(buckets_, bucket_count_);
  buckets_ = fresh;
  bucket_count_ = new_count;
  bucket_shift_ = new_shift;
  return true;
}

StackId StackTable::NewId() {
  if (free_ids_ != kInvalidStackId) {
    StackId id = free_ids_;
    free_ids_ = At(id).next;
    return id;
  }
  StackId id = next_unused_id_;
  std::uint32_t chunk = id >> kChunkShift;
  if (chunk >= kMaxChunks) return kInvalidStackId;
  if (chunks_[chunk] == nullptr) {
    Node* nodes = memory_.AllocateZeroedArray<Node>(kChunkNodes);
    if (nodes == nullptr) return kInvalidStackId;
    chunks_[chunk] = nodes;
  }
  // Nodes are used in id order: their pages are made present a window at a time (prefault.h).
  if ((id & (kPrefaultNodes - 1)) == 0) PrefaultForWrite(&At(id), kPrefaultNodes * sizeof(Node));
  ++next_unused_id_;
  return id;
}

// The root is made with the first stack (a constructor cannot report running out of memory) and
// is never freed.
bool StackTable::EnsureRoot() {
  if (next_unused_id_ != kRootId) return true;
  if (chunks_ == nullptr) {
    chunks_ = memory_.AllocateZeroedArray<Node*>(kMaxChunks);
    if (chunks_ == nullptr) return false;
  }
  if (bucket_count_ == 0 && !GrowBuckets()) return false;
  if (recent_entries_ == nullptr) {
    recent_entries_ = memory_.AllocateZeroedArray<RecentStacks::Entry>(kRecentStacks);
    if (recent_entries_ == nullptr) return false;
  }
  if (recent_frames_ == nullptr) {
    recent_frames_ = memory_.AllocateArray<std::uint64_t>(kRecentFrames);
    if (recent_frames_ == nullptr) return false;
    recent_.Attach(recent_entries_, kRecentStacks, recent_frames_, kRecentFrames);
  }
  if (NewId() != kRootId) return false;
  At(kRootId) = {0, kInvalidStackId, kInvalidStackId, 0, 0};
  if (observer_ != nullptr) observer_->NodeCreated(kRootId, kInvalidStackId, 0);
  return true;
}

void StackTable::Observe(LiveSetObserver* observer) {
  observer_ = observer;
  if (observer == nullptr) return;
  // Every id handed out so far: free ones too, which no live object names, so telling of them is
  // harmless, and cheaper than telling them apart.
  for (StackId id = kRootId; id < next_unused_id_; ++id) {
    const Node& node = At(id);
    observer->NodeCreated(id, node.parent, node.frame);
  }
}

StackId StackTable::FindChild(StackId parent, std::uint64_t frame) const {
  for (StackId id = buckets_[Bucket(HashEdge(parent, frame))]; id != kInvalidStackId;
       id = At(id).next) {
    const Node& node = At(id);
    if (node.frame == frame && node.parent == parent) return id;
  }
  return kInvalidStackId;
}

StackId StackTable::AddChild(StackId parent, std::uint64_t frame) {
  if ((nodes_ + 1) * 4 > bucket_count_ * 3 && !GrowBuckets()) return kInvalidStackId;
  StackId id = NewId();
  if (id == kInvalidStackId) return kInvalidStackId;
  std::size_t bucket = Bucket(HashEdge(parent, frame));
  Node& node = At(id);
  node.frame = frame;
  node.parent = parent;
  node.next = buckets_[bucket];
  node.children = 0;
  // A recycled id's count was last changed by UnrefIfNotLast, atomically and outside the lock.
  Refs(node).store(0, std::memory_order_relaxed);
  if (observer_ != nullptr) observer_->NodeCreated(id, parent, frame);
  buckets_[bucket] = id;
  ++At(parent).children;
  ++nodes_;
  return id;
}

StackId StackTable::InternUnreferenced(const std::uint64_t* frames, std::uint32_t depth) {
  if (!EnsureRoot()) return kInvalidStackId;
  StackId node;
  if (depth == 0 || depth > kRecentMaxDepth) {  // the empty stack is the root: nothing to find
    node = InternThroughTrie(frames, depth);
  } else {
    const RecentStacks::Found recent = recent_.Find(frames, depth, frees_);
    node = recent.id;
    if (node == kInvalidStackId) {
      node = InternThroughTrie(frames, depth);
      if (node != kInvalidStackId) recent_.Remember(recent.hash, node, frames, depth, frees_);
    }
  }
  return node;
}

StackId StackTable::Intern(const std::uint64_t* frames, std::uint32_t depth) {
  StackId node = InternUnreferenced(frames, depth);
  if (node != kInvalidStackId) Ref(node);
  return node;
}

StackId StackTable::InternThroughTrie(const std::uint64_t* frames, std::uint32_t depth) {
  StackId node = kRootId;
  for (std::uint32_t i = depth; i-- > 0;) {  // outermost frame first
    StackId child = FindChild(node, frames[i]);
    if (child == kInvalidStackId) {
      child = AddChild(node, frames[i]);
      if (child == kInvalidStackId) {
        // Out of memory: the nodes this call made have neither references nor children yet.
        if (node != kRootId && Refs(At(node)).load(std::memory_order_relaxed) == 0 &&
            At(node).children == 0) {
          Unlink(node);
          ReleaseUpwards(node);
        }
        return kInvalidStackId;
      }
    }
    node = child;
  }
  return node;
}

void StackTable::Ref(StackId id) {
  if (Refs(At(id)).fetch_add(1, std::memory_order_relaxed) == 0) ++stacks_;
}

void StackTable::Unlink(StackId id) {
  const Node& node = At(id);
  StackId* link = &buckets_[Bucket(HashEdge(node.parent, node.frame))];
  while (*link != id) link = &At(*link).next;
  *link = node.next;
  --nodes_;
  ++frees_;  // invalidates the recent-stacks table: the id may now be recycled
}

void StackTable::ReleaseUpwards(StackId id) {
  while (id != kRootId) {
    Node& node = At(id);
    StackId parent = node.parent;
    node.next = free_ids_;
    free_ids_ = id;
    Node& up = At(parent);
    if (--up.children != 0 || Refs(up).load(std::memory_order_relaxed) != 0 || parent == kRootId) {
      return;
    }
    Unlink(parent);
    id = parent;
  }
}

bool StackTable::UnrefIfNotLast(StackId id) {
  auto refs = Refs(At(id));
  std::uint32_t seen = refs.load(std::memory_order_relaxed);
  while (seen > 1) {
    if (refs.compare_exchange_weak(seen, seen - 1, std::memory_order_relaxed)) return true;
  }
  return false;
}

void StackTable::Unref(StackId id) {
  Node& node = At(id);
  if (Refs(node).fetch_sub(1, std::memory_order_relaxed) != 1) return;
  --stacks_;
  if (id == kRootId) return;
  // A node with children stays in the index: it is their prefix. It is freed with its last child.
  if (node.children != 0) return;
  Unlink(id);
  if (pins_ > 0) {
    node.next = pending_ids_;
    pending_ids_ = id;
  } else {
    ReleaseUpwards(id);
  }
}

void StackTable::Pin() { ++pins_; }

void StackTable::Unpin() {
  if (--pins_ != 0) return;
  while (pending_ids_ != kInvalidStackId) {
    StackId id = pending_ids_;
    pending_ids_ = At(id).next;
    ReleaseUpwards(id);
  }
}

std::uint32_t StackTable::CopyFrames(StackId id, std::uint64_t* out, std::uint32_t capacity) const {
  std::uint32_t n = 0;
  for (; id != kRootId && n < capacity; id = At(id).parent) out[n++] = At(id).frame;
  return n;
}

std::uint32_t StackTable::Depth(StackId id) const {
  std::uint32_t depth = 0;
  for (; id != kRootId; id = At(id).parent) ++depth;
  return depth;
}

}  // namespace heaprec
