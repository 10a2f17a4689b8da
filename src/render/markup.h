// Text inside the SVG and HTML heaprec writes.
#pragma once

#include <string>

namespace heaprec::render {

// Text for XML/HTML content and attribute values: markup characters escaped, control characters
// made spaces and invalid UTF-8 replaced by U+FFFD, so the document always parses.
std::string XmlEscape(const std::string& s);

}  // namespace heaprec::render
