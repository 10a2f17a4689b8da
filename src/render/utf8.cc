#include "render/utf8.h"

#include <algorithm>

namespace heaprec::render {

size_t Utf8SequenceLength(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char b = byte(i);
  size_t len;
  unsigned char lo = 0x80, hi = 0xbf;  // allowed range of the second byte
  if (b < 0x80) return 1;
  if (b >= 0xc2 && b <= 0xdf) {
    len = 2;
  } else if (b >= 0xe0 && b <= 0xef) {
    len = 3;
    if (b == 0xe0) lo = 0xa0;  // overlong
    if (b == 0xed) hi = 0x9f;  // surrogates
  } else if (b >= 0xf0 && b <= 0xf4) {
    len = 4;
    if (b == 0xf0) lo = 0x90;  // overlong
    if (b == 0xf4) hi = 0x8f;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < len; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xbf) return 0;
  }
  return len;
}

size_t TerminalWidth(std::string_view s) {
  size_t columns = 0;
  for (char c : s) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++columns;  // not a continuation byte
  }
  return columns;
}

std::string PadLeft(const std::string& s, size_t width) {
  size_t columns = TerminalWidth(s);
  return columns >= width ? s : std::string(width - columns, ' ') + s;
}

std::string PadRight(const std::string& s, size_t width) {
  size_t columns = TerminalWidth(s);
  return columns >= width ? s : s + std::string(width - columns, ' ');
}

std::string Truncate(const std::string& s, size_t max) {
  size_t chars = 0, i = 0;
  while (i < s.size()) {
    size_t len = std::max<size_t>(Utf8SequenceLength(s, i), 1);
    if (chars == max - 1 && i + len < s.size()) return s.substr(0, i) + "\xE2\x80\xA6";
    i += len;
    ++chars;
  }
  return s;
}

}  // namespace heaprec::render
