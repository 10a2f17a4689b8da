// Builds a NUL-terminated string in a caller's fixed buffer: text and decimal numbers, no malloc,
// no stdio, no locale, so that it can run in a signal handler (a crash profile's file name, a
// manifest line). A string that does not fit is reported once, by Finish, rather than cut short.
#pragma once

#include <cstddef>
#include <cstring>

namespace heaprec {

class Appender {
 public:
  Appender(char* out, std::size_t capacity) : out_(out), capacity_(capacity) {}
  void Add(const char* s, std::size_t n) {
    if (size_ + n >= capacity_) {
      overflow_ = true;
      return;
    }
    std::memcpy(out_ + size_, s, n);
    size_ += n;
  }
  void Add(const char* s) { Add(s, std::strlen(s)); }
  void AddUnsigned(unsigned long long v, int min_digits) {
    char digits[24];
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0 || n < min_digits);
    for (int i = n - 1; i >= 0; --i) Add(&digits[i], 1);
  }
  // A minus sign for negative values (years before 1 AD, absurd times).
  void AddSigned(long long v, int min_digits) {
    unsigned long long magnitude = static_cast<unsigned long long>(v);
    if (v < 0) {
      Add("-", 1);
      magnitude = 0 - magnitude;  // also right for LLONG_MIN
    }
    AddUnsigned(magnitude, min_digits);
  }
  // Terminates the string; false (and the buffer's contents unspecified) when it did not fit.
  bool Finish() {
    if (overflow_ || size_ >= capacity_) return false;  // no room even for the terminator
    out_[size_] = '\0';
    return true;
  }
  std::size_t size() const { return size_; }

 private:
  char* out_;
  std::size_t capacity_;
  std::size_t size_ = 0;
  bool overflow_ = false;
};

}  // namespace heaprec
