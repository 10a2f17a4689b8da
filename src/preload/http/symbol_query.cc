#include "preload/http/symbol_query.h"

namespace heaprec::preload {
namespace {

int DigitValue(char c, int base) {
  int value = 99;
  if (c >= '0' && c <= '9') value = c - '0';
  if (c >= 'a' && c <= 'f') value = c - 'a' + 10;
  if (c >= 'A' && c <= 'F') value = c - 'A' + 10;
  return value < base ? value : -1;
}

}  // namespace

bool SymbolQueryParser::TakeWord(std::uint64_t* address) {
  const std::size_t length = length_;
  const bool too_long = too_long_;
  length_ = 0;
  too_long_ = false;
  if (too_long || length == 0) return false;
  std::size_t i = 0;
  int base = 10;
  if (length > 2 && word_[0] == '0' && (word_[1] == 'x' || word_[1] == 'X')) {
    base = 16;
    i = 2;
  }
  std::uint64_t value = 0;
  for (; i < length; ++i) {
    int digit = DigitValue(word_[i], base);
    if (digit < 0) return false;
    const std::uint64_t limit = (UINT64_MAX - static_cast<std::uint64_t>(digit)) / base;
    if (value > limit) return false;  // does not fit in 64 bits
    value = value * static_cast<std::uint64_t>(base) + static_cast<std::uint64_t>(digit);
  }
  *address = value;
  return value != 0;
}

std::size_t SymbolQueryParser::Feed(const char* data, std::size_t size, std::uint64_t* out,
                                    std::size_t capacity, std::size_t* count) {
  std::size_t i = 0;
  for (; i < size && *count < capacity; ++i) {
    if (data[i] != '+') {
      if (length_ < kMaxWord) {
        word_[length_++] = data[i];
      } else {
        too_long_ = true;
      }
      continue;
    }
    std::uint64_t address;
    if (TakeWord(&address)) out[(*count)++] = address;
  }
  return i;
}

bool SymbolQueryParser::Finish(std::uint64_t* address) { return TakeWord(address); }

}  // namespace heaprec::preload
