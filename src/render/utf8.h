// UTF-8 for every renderer: names come from binaries and source paths and may be anything, but
// what heaprec writes must be valid UTF-8 (JSON, XML) and line up in a terminal.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace heaprec::render {

// The length of the valid UTF-8 sequence at s[i] (1-4), or 0 if it is invalid (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF, no truncated sequence).
size_t Utf8SequenceLength(std::string_view s, size_t i);

// The terminal columns `s` takes: one per character (every byte that is not a continuation
// byte), so "±" is one column.
size_t TerminalWidth(std::string_view s);

// `s` padded with spaces on the left (PadLeft) or the right (PadRight) to `width` columns.
std::string PadLeft(const std::string& s, size_t width);
std::string PadRight(const std::string& s, size_t width);

// At most `max` characters, the last one an ellipsis when `s` is cut.
std::string Truncate(const std::string& s, size_t max);

}  // namespace heaprec::render
