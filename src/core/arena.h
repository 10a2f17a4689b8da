// MmapArena: the preload library's private allocator, backed directly by mmap.
//
// Thread-safe (one mutex; it is only used on the sampled slow path and during serialization, never
// on the unsampled fast path). Never calls malloc, never throws, not async-signal-safe.
//
//   size classes 16, 32, 64, ... 64 KiB: per-class free lists, carved from 1 MiB chunks
//   larger requests: one mmap each, returned with munmap
//   a reserve: pages mapped ahead of need, handed out only when mmap fails, so that the final dump
//   of a process dying for want of memory (RLIMIT_AS, strict overcommit) still finds some
//
// Chunks are never returned to the system: the recorder's tables are long-lived and recycle their
// blocks through the free lists, so unmapping would only buy fragmentation back.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/memory_resource.h"
#include "core/mutex.h"

namespace heaprec {

class MmapArena final : public MemoryResource {
 public:
  MmapArena() = default;
  MmapArena(const MmapArena&) = delete;
  MmapArena& operator=(const MmapArena&) = delete;

  void* Allocate(std::size_t bytes) override;
  // Clears only a block that was handed out before (from a free list); one carved from a chunk
  // for the first time, or mapped for itself, is still the kernel's zero pages.
  void* AllocateZeroed(std::size_t bytes) override;
  void Deallocate(void* p, std::size_t bytes) override;
  std::size_t BytesInUse() const override;
  // Bytes obtained from the system (chunks plus large mappings): the profiler's own footprint.
  std::size_t BytesMapped() const;

  // The most bytes in use since the last ResetHighWater(): what a dump needed, measured.
  std::size_t HighWater() const;
  void ResetHighWater();

  // Keeps at least `bytes` mapped in the reserve (a larger reserve replaces a smaller, unused one).
  // Nothing is taken from it while mmap succeeds.
  void EnsureReserve(std::size_t bytes);

  // fork() support: hold the lock across fork so the child never inherits it half-taken.
  void LockForFork() { mutex_.Lock(); }
  void UnlockAfterForkInParent() { mutex_.Unlock(); }
  void ResetAfterForkInChild() { mutex_.ResetAfterFork(); }

 private:
  static constexpr int kMinClassShift = 4;   // 16 bytes
  static constexpr int kMaxClassShift = 16;  // 64 KiB
  static constexpr int kClassCount = kMaxClassShift - kMinClassShift + 1;
  static constexpr std::size_t kChunkBytes = std::size_t{1} << 20;

  struct FreeBlock {
    FreeBlock* next;
  };

  static int SizeClass(std::size_t bytes);
  // Allocate's work; *fresh tells whether the block has never been handed out (reads as zero).
  void* AllocateBlock(std::size_t bytes, bool* fresh);
  void* CarveLocked(std::size_t block_bytes);
  // mmap, or pages from the reserve when mmap fails; null when both are out. Lock held.
  void* MapLocked(std::size_t bytes);
  bool InReserve(const void* p) const;

  mutable Mutex mutex_;
  FreeBlock* free_lists_[kClassCount] = {};
  char* chunk_cursor_ = nullptr;
  char* chunk_end_ = nullptr;
  std::size_t in_use_ = 0;
  std::size_t high_water_ = 0;
  std::size_t mapped_ = 0;
  char* reserve_begin_ =
      nullptr;  // [reserve_begin_, reserve_end_), handed out from reserve_cursor_
  char* reserve_cursor_ = nullptr;
  char* reserve_end_ = nullptr;
};

}  // namespace heaprec
