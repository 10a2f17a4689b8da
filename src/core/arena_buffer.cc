#include "core/arena_buffer.h"

namespace heaprec {

bool ArenaBuffer::Grow(std::size_t additional) {
  std::size_t capacity = capacity_ == 0 ? 4096 : capacity_;
  while (capacity < size_ + additional) capacity *= 2;
  char* fresh = static_cast<char*>(memory_.Allocate(capacity));
  if (fresh == nullptr) {
    failed_ = true;
    return false;
  }
  if (size_ != 0) std::memcpy(fresh, data_, size_);
  memory_.Deallocate(data_, capacity_);
  data_ = fresh;
  capacity_ = capacity;
  return true;
}

}  // namespace heaprec
