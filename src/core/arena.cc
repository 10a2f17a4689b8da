#include "core/arena.h"

#include <sys/mman.h>

#include <cstring>

namespace heaprec {
namespace {

void* MapPages(std::size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

std::size_t RoundUpToPage(std::size_t bytes) {
  constexpr std::size_t kPage = 4096;
  return (bytes + kPage - 1) & ~(kPage - 1);
}

}  // namespace

int MmapArena::SizeClass(std::size_t bytes) {
  int shift = kMinClassShift;
  while ((std::size_t{1} << shift) < bytes) ++shift;
  return shift - kMinClassShift;
}

void* MmapArena::MapLocked(std::size_t bytes) {
  if (void* p = MapPages(bytes)) return p;
  if (reserve_cursor_ == nullptr ||
      static_cast<std::size_t>(reserve_end_ - reserve_cursor_) < bytes) {
    return nullptr;
  }
  void* p = reserve_cursor_;
  reserve_cursor_ += bytes;
  return p;
}

bool MmapArena::InReserve(const void* p) const { return p >= reserve_begin_ && p < reserve_end_; }

void* MmapArena::CarveLocked(std::size_t block_bytes) {
  if (chunk_cursor_ == nullptr ||
      static_cast<std::size_t>(chunk_end_ - chunk_cursor_) < block_bytes) {
    // The rest of the old chunk is abandoned: at most one block of the largest class per chunk.
    char* chunk = static_cast<char*>(MapLocked(kChunkBytes));
    if (chunk == nullptr) return nullptr;
    mapped_ += kChunkBytes;
    chunk_cursor_ = chunk;
    chunk_end_ = chunk + kChunkBytes;
  }
  void* block = chunk_cursor_;
  chunk_cursor_ += block_bytes;
  return block;
}

// Pages from mmap (the reserve's too: handed out once, never reused) and chunk space carved for the
// first time have never been written: they read as zero. Only a free list's blocks have been used.
void* MmapArena::AllocateBlock(std::size_t bytes, bool* fresh) {
  if (bytes == 0) bytes = 1;
  *fresh = true;
  if (bytes > (std::size_t{1} << kMaxClassShift)) {
    std::size_t mapped = RoundUpToPage(bytes);
    MutexLock lock(mutex_);
    void* p = MapLocked(mapped);
    if (p == nullptr) return nullptr;
    mapped_ += mapped;
    in_use_ += bytes;
    if (in_use_ > high_water_) high_water_ = in_use_;
    return p;
  }
  int size_class = SizeClass(bytes);
  MutexLock lock(mutex_);
  void* p;
  if (FreeBlock* head = free_lists_[size_class]) {
    free_lists_[size_class] = head->next;
    p = head;
    *fresh = false;
  } else {
    p = CarveLocked(std::size_t{1} << (size_class + kMinClassShift));
    if (p == nullptr) return nullptr;
  }
  in_use_ += bytes;
  if (in_use_ > high_water_) high_water_ = in_use_;
  return p;
}

void* MmapArena::Allocate(std::size_t bytes) {
  bool fresh;
  return AllocateBlock(bytes, &fresh);
}

void* MmapArena::AllocateZeroed(std::size_t bytes) {
  bool fresh;
  void* p = AllocateBlock(bytes, &fresh);
  if (p != nullptr && !fresh) std::memset(p, 0, bytes);
  return p;
}

void MmapArena::Deallocate(void* p, std::size_t bytes) {
  if (p == nullptr) return;
  if (bytes == 0) bytes = 1;
  if (bytes > (std::size_t{1} << kMaxClassShift)) {
    std::size_t mapped = RoundUpToPage(bytes);
    MutexLock lock(mutex_);
    if (!InReserve(p)) munmap(p, mapped);  // reserve pages are spent: the process is ending
    mapped_ -= mapped;
    in_use_ -= bytes;
    return;
  }
  int size_class = SizeClass(bytes);
  MutexLock lock(mutex_);
  auto* block = static_cast<FreeBlock*>(p);
  block->next = free_lists_[size_class];
  free_lists_[size_class] = block;
  in_use_ -= bytes;
}

std::size_t MmapArena::BytesInUse() const {
  MutexLock lock(mutex_);
  return in_use_;
}

std::size_t MmapArena::BytesMapped() const {
  MutexLock lock(mutex_);
  return mapped_ + static_cast<std::size_t>(reserve_end_ - reserve_begin_);
}

std::size_t MmapArena::HighWater() const {
  MutexLock lock(mutex_);
  return high_water_;
}

void MmapArena::ResetHighWater() {
  MutexLock lock(mutex_);
  high_water_ = in_use_;
}

void MmapArena::EnsureReserve(std::size_t bytes) {
  bytes = RoundUpToPage(bytes);
  MutexLock lock(mutex_);
  if (static_cast<std::size_t>(reserve_end_ - reserve_begin_) >= bytes) return;
  if (reserve_cursor_ != reserve_begin_) return;  // in use: memory already ran out once
  char* fresh = static_cast<char*>(MapPages(bytes));
  if (fresh == nullptr) return;
  if (reserve_begin_ != nullptr)
    munmap(reserve_begin_, static_cast<std::size_t>(reserve_end_ - reserve_begin_));
  reserve_begin_ = reserve_cursor_ = fresh;
  reserve_end_ = fresh + bytes;
}

}  // namespace heaprec
