#include "core/stack_table.h"

#include <cstring>

#include "core/hash.h"

namespace heaprec {

StackTable::StackTable(MemoryResource& memory) : memory_(memory) {}

StackTable::~StackTable() {
  for (StackId id = 1; id < next_unused_id_; ++id) {
    Entry& e = At(id);
    if (e.frames != nullptr) memory_.DeallocateArray(e.frames, e.depth == 0 ? 1 : e.depth);
  }
  for (std::uint32_t c = 0; c < kMaxChunks && chunks_[c] != nullptr; ++c) {
    memory_.DeallocateArray(chunks_[c], kChunkEntries);
  }
  memory_.DeallocateArray(buckets_, bucket_count_);
}

// One multiply and one shift per frame, then a full mix: hashing is on every sampled allocation and
// was a quarter of its cost with a full mix per frame. Frames are return addresses, which differ in
// their low bits; the xor-shift folds the high product bits back down before the next frame.
std::uint64_t StackTable::HashFrames(const std::uint64_t* frames, std::uint32_t depth) {
  constexpr std::uint64_t kMultiplier = 0x9fb21c651e98df25ULL;
  std::uint64_t h = depth * 0x9e3779b97f4a7c15ULL;
  for (std::uint32_t i = 0; i < depth; ++i) {
    h = (h ^ frames[i]) * kMultiplier;
    h ^= h >> 29;
  }
  return MixBits(h);
}

bool StackTable::GrowBuckets() {
  std::size_t new_count = bucket_count_ == 0 ? 1024 : bucket_count_ * 2;
  StackId* fresh = memory_.AllocateArray<StackId>(new_count);
  if (fresh == nullptr) return false;
  std::memset(fresh, 0, new_count * sizeof(StackId));
  for (std::size_t b = 0; b < bucket_count_; ++b) {
    StackId id = buckets_[b];
    while (id != kInvalidStackId) {
      Entry& e = At(id);
      StackId next = e.next;
      std::size_t nb = e.hash & (new_count - 1);
      e.next = fresh[nb];
      fresh[nb] = id;
      id = next;
    }
  }
  memory_.DeallocateArray(buckets_, bucket_count_);
  buckets_ = fresh;
  bucket_count_ = new_count;
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
    Entry* entries = memory_.AllocateArray<Entry>(kChunkEntries);
    if (entries == nullptr) return kInvalidStackId;
    std::memset(entries, 0, kChunkEntries * sizeof(Entry));
    chunks_[chunk] = entries;
  }
  ++next_unused_id_;
  return id;
}

StackId StackTable::Intern(const std::uint64_t* frames, std::uint32_t depth) {
  std::uint64_t hash = HashFrames(frames, depth);
  if (bucket_count_ != 0) {
    for (StackId id = buckets_[hash & (bucket_count_ - 1)]; id != kInvalidStackId;
         id = At(id).next) {
      Entry& e = At(id);
      if (e.hash == hash && e.depth == depth &&
          (depth == 0 || std::memcmp(e.frames, frames, depth * sizeof(std::uint64_t)) == 0)) {
        ++e.refs;
        return id;
      }
    }
  }
  if (count_ + 1 > bucket_count_ * 3 / 4 && !GrowBuckets()) return kInvalidStackId;
  auto* copy = memory_.AllocateArray<std::uint64_t>(depth == 0 ? 1 : depth);
  if (copy == nullptr) return kInvalidStackId;
  StackId id = NewId();
  if (id == kInvalidStackId) {
    memory_.DeallocateArray(copy, depth == 0 ? 1 : depth);
    return kInvalidStackId;
  }
  if (depth != 0) std::memcpy(copy, frames, depth * sizeof(std::uint64_t));
  Entry& e = At(id);
  e.hash = hash;
  e.frames = copy;
  e.depth = depth;
  e.refs = 1;
  std::size_t bucket = hash & (bucket_count_ - 1);
  e.next = buckets_[bucket];
  buckets_[bucket] = id;
  ++count_;
  return id;
}

void StackTable::Ref(StackId id) { ++At(id).refs; }

void StackTable::Unlink(StackId id) {
  Entry& e = At(id);
  StackId* link = &buckets_[e.hash & (bucket_count_ - 1)];
  while (*link != id) link = &At(*link).next;
  *link = e.next;
  --count_;
}

void StackTable::Release(StackId id) {
  Entry& e = At(id);
  memory_.DeallocateArray(e.frames, e.depth == 0 ? 1 : e.depth);
  e.frames = nullptr;
  e.depth = 0;
  e.next = free_ids_;
  free_ids_ = id;
}

void StackTable::Unref(StackId id) {
  Entry& e = At(id);
  if (--e.refs != 0) return;
  Unlink(id);
  if (pins_ > 0) {
    e.next = pending_ids_;
    pending_ids_ = id;
  } else {
    Release(id);
  }
}

void StackTable::Pin() { ++pins_; }

void StackTable::Unpin() {
  if (--pins_ != 0) return;
  while (pending_ids_ != kInvalidStackId) {
    StackId id = pending_ids_;
    pending_ids_ = At(id).next;
    Release(id);
  }
}

StackFrames StackTable::Frames(StackId id) const {
  const Entry& e = At(id);
  return {e.frames, e.depth};
}

std::uint32_t StackTable::RefCount(StackId id) const { return At(id).refs; }

}  // namespace heaprec
