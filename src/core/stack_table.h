// StackTable: call stacks interned once, referenced by a small id, reference-counted.
//
// A stack is a sequence of opaque 64-bit frames, leaf first: program counters for the preload front
// end, interned frame ids for a language runtime. Identical stacks share one entry, so a million
// live objects allocated from the same place cost one stack.
//
//   chunks_[id / kChunkEntries] ──▶ [Entry Entry Entry ...]      entries never move once created
//   buckets_[hash % n] ──▶ id ──next──▶ id ──▶ 0                  hash chains through the entries
//
// Thread safety: not synchronized. One lock (the recorder's) must cover every call except Frames(),
// which may be called without the lock for an id that is referenced or pinned (see Pin) by the
// caller, because an entry's frames never change or move while it can be reached.
//
// Memory comes from the MemoryResource given at construction; no call throws or calls malloc.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/memory_resource.h"

namespace heaprec {

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
  void Ref(StackId id);
  // Drops one reference; at zero the stack leaves the table (its id may be reused), unless the
  // table is pinned, in which case its frames stay readable until the last Unpin().
  void Unref(StackId id);

  // While pinned, stacks whose count drops to zero keep their frames: a serialization that copied
  // ids out of the live table pins the table so those ids stay valid without a reference per
  // object.
  void Pin();
  void Unpin();

  StackFrames Frames(StackId id) const;
  std::uint32_t RefCount(StackId id) const;
  std::size_t size() const { return count_; }  // stacks currently in the table

 private:
  static constexpr std::uint32_t kChunkShift = 12;
  static constexpr std::uint32_t kChunkEntries = 1u << kChunkShift;
  static constexpr std::uint32_t kMaxChunks = 1u << 14;  // 67M stacks

  struct Entry {
    std::uint64_t hash;
    std::uint64_t* frames;
    std::uint32_t depth;
    std::uint32_t refs;
    StackId next;  // next in the hash chain, or in the free / pending list
  };

  Entry& At(StackId id) const { return chunks_[id >> kChunkShift][id & (kChunkEntries - 1)]; }
  static std::uint64_t HashFrames(const std::uint64_t* frames, std::uint32_t depth);
  StackId NewId();
  bool GrowBuckets();
  void Unlink(StackId id);
  void Release(StackId id);

  MemoryResource& memory_;
  Entry* chunks_[kMaxChunks] = {};
  std::uint32_t next_unused_id_ = 1;  // id 0 is kInvalidStackId
  StackId free_ids_ = kInvalidStackId;
  StackId pending_ids_ = kInvalidStackId;  // unreferenced while pinned, released at the last Unpin
  std::uint32_t pins_ = 0;
  StackId* buckets_ = nullptr;
  std::size_t bucket_count_ = 0;
  std::size_t count_ = 0;
};

}  // namespace heaprec
