// A MemoryResource for out-of-memory tests: the system allocator, failing every allocation while
// `fail` is set.
#pragma once

#include <cstddef>

#include "core/memory_resource.h"

namespace heaprec {

class FailingMemoryResource final : public MemoryResource {
 public:
  void* Allocate(std::size_t bytes) override { return fail ? nullptr : system_.Allocate(bytes); }
  void Deallocate(void* p, std::size_t bytes) override { system_.Deallocate(p, bytes); }
  std::size_t BytesInUse() const override { return system_.BytesInUse(); }
  bool fail = false;

 private:
  SystemMemoryResource system_;
};

}  // namespace heaprec
