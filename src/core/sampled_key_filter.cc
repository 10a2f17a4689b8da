#include "core/sampled_key_filter.h"

namespace heaprec {

void SampledKeyFilter::Insert(std::uint64_t key) {
  std::atomic<std::uint8_t>& c = counters_[Slot(key)];
  std::uint8_t v = c.load(std::memory_order_relaxed);
  while (v != kStuck &&
         !c.compare_exchange_weak(v, static_cast<std::uint8_t>(v + 1), std::memory_order_relaxed)) {
  }
}

void SampledKeyFilter::Remove(std::uint64_t key) {
  std::atomic<std::uint8_t>& c = counters_[Slot(key)];
  std::uint8_t v = c.load(std::memory_order_relaxed);
  while (v != kStuck && v != 0 &&
         !c.compare_exchange_weak(v, static_cast<std::uint8_t>(v - 1), std::memory_order_relaxed)) {
  }
}

}  // namespace heaprec
