// Where the heap recorder gets its own memory from.
//
// The recorder never calls malloc itself: inside the preload front end that would recurse into the
// hooks and show the profiler's bookkeeping in the very heap it measures. Front ends hand it a
// MemoryResource instead: MmapArena (arena.h) in the preload library, the system allocator in tests
// and in front ends whose host allocator is not being interposed.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>

namespace heaprec {

class MemoryResource {
 public:
  virtual ~MemoryResource() = default;
  // Returns memory aligned to at least 16 bytes, or nullptr when none is left. Thread-safe.
  virtual void* Allocate(std::size_t bytes) = 0;
  // `bytes` must be the size passed to Allocate. Thread-safe.
  virtual void Deallocate(void* p, std::size_t bytes) = 0;
  // Bytes currently handed out, for the profiler's own memory statistics.
  virtual std::size_t BytesInUse() const = 0;
  // As Allocate, and every byte reads as zero. This clears what Allocate returns; a resource that
  // knows when its memory comes fresh from the kernel, already zero, skips the clearing there
  // (MmapArena): its stores would touch, and fault in, every page of a table that a short process
  // then barely uses.
  // Defined here, as every virtual function of this class: the class keeps no key function, so its
  // vtable is emitted wherever it is used (the core is built without RTTI, its tests with it).
  virtual void* AllocateZeroed(std::size_t bytes) {
    void* p = Allocate(bytes);
    if (p != nullptr) std::memset(p, 0, bytes);
    return p;
  }

  template <typename T>
  T* AllocateArray(std::size_t count) {
    return static_cast<T*>(Allocate(count * sizeof(T)));
  }
  template <typename T>
  T* AllocateZeroedArray(std::size_t count) {
    return static_cast<T*>(AllocateZeroed(count * sizeof(T)));
  }
  template <typename T>
  void DeallocateArray(T* p, std::size_t count) {
    Deallocate(p, count * sizeof(T));
  }
};

// The process's own allocator: for tests and for front ends that do not interpose malloc.
class SystemMemoryResource final : public MemoryResource {
 public:
  void* Allocate(std::size_t bytes) override;
  void Deallocate(void* p, std::size_t bytes) override;
  std::size_t BytesInUse() const override;

 private:
  std::atomic<std::size_t> in_use_{0};
};

}  // namespace heaprec
