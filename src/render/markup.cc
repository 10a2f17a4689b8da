#include "render/markup.h"

#include "render/utf8.h"

namespace heaprec::render {

std::string XmlEscape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    char c = s[i];
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += ' ';
        } else if (size_t len = Utf8SequenceLength(s, i); len == 0) {
          out += "\xEF\xBF\xBD";  // U+FFFD
        } else {
          out.append(s, i, len);
          i += len;
          continue;
        }
    }
    ++i;
  }
  return out;
}

}  // namespace heaprec::render
