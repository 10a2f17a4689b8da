// ArenaBuffer: a growable byte buffer on a MemoryResource, usable as protozero's output buffer.
//
// protozero writes through buffer_customization<T>; specializing it for ArenaBuffer keeps
// std::string (and so malloc) out of the preload library. On exhausted memory the buffer turns
// `failed` and drops what is written; writers check failed() before using the bytes.
#pragma once

#include <cstddef>
#include <cstring>
#include <protozero/buffer_tmpl.hpp>

#include "core/memory_resource.h"

namespace heaprec {

class ArenaBuffer {
 public:
  explicit ArenaBuffer(MemoryResource& memory) : memory_(memory) {}
  ~ArenaBuffer() { memory_.Deallocate(data_, capacity_); }
  ArenaBuffer(const ArenaBuffer&) = delete;
  ArenaBuffer& operator=(const ArenaBuffer&) = delete;

  const char* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool failed() const { return failed_; }
  void clear() { size_ = 0; }

  void Append(const char* bytes, std::size_t count) {
    if (!Reserve(count)) return;
    std::memcpy(data_ + size_, bytes, count);
    size_ += count;
  }
  void AppendZeros(std::size_t count) {
    if (!Reserve(count)) return;
    std::memset(data_ + size_, 0, count);
    size_ += count;
  }
  void Resize(std::size_t size) {
    if (size <= size_) size_ = size;
  }
  void Erase(std::size_t from, std::size_t to) {
    if (failed_) return;
    std::memmove(data_ + from, data_ + to, size_ - to);
    size_ -= to - from;
  }
  char* At(std::size_t pos) {
    // After a failure protozero may still patch a length it reserved; give it harmless scratch
    // space.
    return failed_ || pos >= capacity_ ? scratch_ : data_ + pos;
  }
  // Room for `additional` more bytes (inline: protozero reserves before every field it writes).
  bool Reserve(std::size_t additional) {
    return !failed_ && (size_ + additional <= capacity_ || Grow(additional));
  }

 private:
  bool Grow(std::size_t additional);

  MemoryResource& memory_;
  char* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
  bool failed_ = false;
  char scratch_[16] = {};
};

}  // namespace heaprec

namespace protozero {

template <>
struct buffer_customization<heaprec::ArenaBuffer> {
  static std::size_t size(const heaprec::ArenaBuffer* b) { return b->size(); }
  static void append(heaprec::ArenaBuffer* b, const char* data, std::size_t count) {
    b->Append(data, count);
  }
  static void append_zeros(heaprec::ArenaBuffer* b, std::size_t count) { b->AppendZeros(count); }
  static void resize(heaprec::ArenaBuffer* b, std::size_t size) { b->Resize(size); }
  static void reserve_additional(heaprec::ArenaBuffer* b, std::size_t size) { b->Reserve(size); }
  static void erase_range(heaprec::ArenaBuffer* b, std::size_t from, std::size_t to) {
    b->Erase(from, to);
  }
  static char* at_pos(heaprec::ArenaBuffer* b, std::size_t pos) { return b->At(pos); }
  static void push_back(heaprec::ArenaBuffer* b, char ch) { b->Append(&ch, 1); }
};

}  // namespace protozero
