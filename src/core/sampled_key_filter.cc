#include "core/sampled_key_filter.h"

namespace heaprec {

SampledKeyFilter::~SampledKeyFilter() {
  memory_.DeallocateArray(counters_.load(std::memory_order_relaxed), kSlots);
}

// The counters, allocated by the first caller; a racing caller's allocation is given back.
std::atomic<std::uint8_t>* SampledKeyFilter::Counters() {
  std::atomic<std::uint8_t>* counters = counters_.load(std::memory_order_acquire);
  if (counters != nullptr) return counters;
  // Zeroed bytes are zero counters: std::atomic<std::uint8_t> is a plain byte.
  static_assert(sizeof(std::atomic<std::uint8_t>) == 1);
  auto* fresh = memory_.AllocateZeroedArray<std::atomic<std::uint8_t>>(kSlots);
  if (fresh == nullptr) return nullptr;
  if (counters_.compare_exchange_strong(counters, fresh, std::memory_order_acq_rel)) return fresh;
  memory_.DeallocateArray(fresh, kSlots);
  return counters;
}

bool SampledKeyFilter::Insert(std::uint64_t key) {
  std::atomic<std::uint8_t>* counters = Counters();
  if (counters == nullptr) return false;
  std::atomic<std::uint8_t>& c = counters[Slot(key)];
  std::uint8_t v = c.load(std::memory_order_relaxed);
  while (v != kStuck &&
         !c.compare_exchange_weak(v, static_cast<std::uint8_t>(v + 1), std::memory_order_relaxed)) {
  }
  return true;
}

void SampledKeyFilter::Remove(std::uint64_t key) {
  std::atomic<std::uint8_t>* counters = counters_.load(std::memory_order_acquire);
  if (counters == nullptr) return;
  std::atomic<std::uint8_t>& c = counters[Slot(key)];
  std::uint8_t v = c.load(std::memory_order_relaxed);
  while (v != kStuck && v != 0 &&
         !c.compare_exchange_weak(v, static_cast<std::uint8_t>(v - 1), std::memory_order_relaxed)) {
  }
}

}  // namespace heaprec
