#include "core/memory_resource.h"

namespace heaprec {

void* SystemMemoryResource::Allocate(std::size_t bytes) {
  void* p = std::aligned_alloc(16, (bytes + 15) & ~std::size_t{15});
  if (p != nullptr) in_use_.fetch_add(bytes, std::memory_order_relaxed);
  return p;
}

void SystemMemoryResource::Deallocate(void* p, std::size_t bytes) {
  if (p == nullptr) return;
  in_use_.fetch_sub(bytes, std::memory_order_relaxed);
  std::free(p);
}

std::size_t SystemMemoryResource::BytesInUse() const {
  return in_use_.load(std::memory_order_relaxed);
}

}  // namespace heaprec
