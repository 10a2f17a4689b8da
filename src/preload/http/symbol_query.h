// The addresses of a /debug/pprof/symbol request, "0xADDR+0xADDR+...", as Go's net/http/pprof
// Symbol handler reads them: words separated by '+', each read by strconv.ParseUint(word, 0, 64);
// a word that does not parse, or parses as 0, is skipped. heaprec reads the forms pprof sends and
// a person would type: hexadecimal with 0x or 0X, and decimal. Fed in pieces as they arrive, so
// a body of any size is read with a fixed state: no allocation, no I/O, fuzzable.
#pragma once

#include <cstddef>
#include <cstdint>

namespace heaprec::preload {

class SymbolQueryParser {
 public:
  // Reads bytes from `data` until `size` are read or `capacity` addresses are in `out` (counted by
  // *count); returns how many bytes it read. Call again with the rest once `out` is emptied.
  std::size_t Feed(const char* data, std::size_t size, std::uint64_t* out, std::size_t capacity,
                   std::size_t* count);
  // The end of the query: the last word, which no '+' ends. True with its address, if it has one.
  bool Finish(std::uint64_t* address);

 private:
  bool TakeWord(std::uint64_t* address);  // the current word's address, if it is one; resets

  static constexpr std::size_t kMaxWord = 24;  // "0x" and 16 digits, or 20 decimal digits
  char word_[kMaxWord];
  std::size_t length_ = 0;
  bool too_long_ = false;
};

}  // namespace heaprec::preload
