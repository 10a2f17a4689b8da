#include "core/allocation_history.h"

#include "core/hash.h"
#include "core/prefault.h"

namespace heaprec {
namespace {

// Every sampled allocation hashes its entry once (Merge keeps the slot it fetched ahead).
std::uint64_t HashEntry(const AllocationTotals& e) { return HashSizedKey(e.stack, e.tag, e.size); }

}  // namespace

AllocationHistory::~AllocationHistory() { memory_.DeallocateArray(slots_, capacity_); }

std::size_t AllocationHistory::SlotOf(const AllocationTotals& key) const {
  return HashEntry(key) & (capacity_ - 1);
}

void AllocationHistory::Clear() {
  // The table is given back, not zeroed: a fork child clears the history it inherited, and zeroing
  // would write, so copy, every page of a table it shares with its parent. The next Reserve makes
  // a small one.
  memory_.DeallocateArray(slots_, capacity_);
  slots_ = nullptr;
  capacity_ = 0;
  used_ = 0;
}

bool AllocationHistory::Reserve(std::size_t more) {
  if ((used_ + more) * 2 <= capacity_) return true;
  std::size_t capacity = capacity_ == 0 ? 1024 : capacity_ * 2;
  while ((used_ + more) * 2 > capacity) capacity *= 2;
  auto* fresh = memory_.AllocateZeroedArray<AllocationTotals>(capacity);
  if (fresh == nullptr) return false;
  // The entries rehashed land on every page of the new table: made present at once (prefault.h).
  if (capacity_ != 0) PrefaultForWrite(fresh, capacity * sizeof(AllocationTotals));
  for (std::size_t i = 0; i < capacity_; ++i) {
    const AllocationTotals& e = slots_[i];
    if (e.stack == kInvalidStackId) continue;
    std::size_t j = HashEntry(e) & (capacity - 1);
    while (fresh[j].stack != kInvalidStackId) j = (j + 1) & (capacity - 1);
    fresh[j] = e;
  }
  memory_.DeallocateArray(slots_, capacity_);
  slots_ = fresh;
  capacity_ = capacity;
  return true;
}

bool AllocationHistory::AddMerged(const AllocationTotals& add, std::size_t home) {
  const double bytes = add.objects * static_cast<double>(add.size);
  std::size_t mask = capacity_ - 1;
  for (std::size_t i = home;; i = (i + 1) & mask) {
    AllocationTotals& e = slots_[i];
    if (e.stack == add.stack && e.size == add.size && e.tag == add.tag) {
      e.objects += add.objects;
      e.bytes += bytes;
      e.temporary += add.temporary;
      return false;
    }
    if (e.stack == kInvalidStackId) {
      e = {add.stack, add.temporary, add.size, add.objects, bytes, add.tag};
      ++used_;
      return true;
    }
  }
}

std::size_t AllocationHistory::CopyTo(AllocationTotals* out, std::size_t capacity) const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < capacity_ && n < capacity; ++i) {
    if (slots_[i].stack != kInvalidStackId) out[n++] = slots_[i];
  }
  return n;
}

}  // namespace heaprec
