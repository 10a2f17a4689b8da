// A MemoryResource for out-of-memory tests: the system allocator, failing every allocation while
// `fail` is set, or every one after the next `succeed_next` when that is not negative.
#pragma once

#include <cstddef>

#include "core/memory_resource.h"

namespace heaprec {

class FailingMemoryResource final : public MemoryResource {
 public:
  void* Allocate(std::size_t bytes) override {
    if (succeed_next == 0) return nullptr;
    if (succeed_next > 0) --succeed_next;
    return fail ? nullptr : system_.Allocate(bytes);
  }
  void Deallocate(void* p, std::size_t bytes) override { system_.Deallocate(p, bytes); }
  std::size_t BytesInUse() const override { return system_.BytesInUse(); }
  bool fail = false;
  long succeed_next = -1;

 private:
  SystemMemoryResource system_;
};

}  // namespace heaprec
