// UTF-8 for every renderer (render/utf8.h): which byte sequences are valid, terminal columns,
// padding and truncation by characters rather than bytes.
#include "render/utf8.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace heaprec::render {
namespace {

size_t Length(std::string_view s) { return Utf8SequenceLength(s, 0); }

TEST(Utf8SequenceLengthTest, ValidSequences) {
  EXPECT_EQ(Length("a"), 1u);
  EXPECT_EQ(Length(std::string_view("\0", 1)), 1u);
  EXPECT_EQ(Length("\x7f"), 1u);
  EXPECT_EQ(Length("\xc2\x80"), 2u);          // U+0080, the smallest two-byte one
  EXPECT_EQ(Length("\xc3\xa9"), 2u);          // é
  EXPECT_EQ(Length("\xe0\xa0\x80"), 3u);      // U+0800, the smallest three-byte one
  EXPECT_EQ(Length("\xe2\x82\xac"), 3u);      // €
  EXPECT_EQ(Length("\xed\x9f\xbf"), 3u);      // U+D7FF, just below the surrogates
  EXPECT_EQ(Length("\xee\x80\x80"), 3u);      // U+E000, just above them
  EXPECT_EQ(Length("\xf0\x90\x80\x80"), 4u);  // U+10000
  EXPECT_EQ(Length("\xf0\x9f\x98\x80"), 4u);  // an emoji
  EXPECT_EQ(Length("\xf4\x8f\xbf\xbf"), 4u);  // U+10FFFF, the largest
  // At an offset, and followed by more text.
  EXPECT_EQ(Utf8SequenceLength("x\xc3\xa9y", 1), 2u);
  EXPECT_EQ(Utf8SequenceLength("x\xc3\xa9y", 3), 1u);
}

TEST(Utf8SequenceLengthTest, OverlongFormsAreInvalid) {
  EXPECT_EQ(Length("\xc0\xaf"), 0u);  // '/' in two bytes
  EXPECT_EQ(Length("\xc1\xbf"), 0u);
  EXPECT_EQ(Length("\xe0\x80\xaf"), 0u);      // '/' in three bytes
  EXPECT_EQ(Length("\xe0\x9f\xbf"), 0u);      // U+07FF in three bytes
  EXPECT_EQ(Length("\xf0\x80\x80\xaf"), 0u);  // '/' in four bytes
  EXPECT_EQ(Length("\xf0\x8f\xbf\xbf"), 0u);  // U+FFFF in four bytes
}

TEST(Utf8SequenceLengthTest, SurrogatesAndBeyondU10FFFFAreInvalid) {
  EXPECT_EQ(Length("\xed\xa0\x80"), 0u);      // U+D800
  EXPECT_EQ(Length("\xed\xbf\xbf"), 0u);      // U+DFFF
  EXPECT_EQ(Length("\xf4\x90\x80\x80"), 0u);  // U+110000
  EXPECT_EQ(Length("\xf5\x80\x80\x80"), 0u);
  EXPECT_EQ(Length("\xff"), 0u);
}

TEST(Utf8SequenceLengthTest, TruncatedAndBrokenSequencesAreInvalid) {
  EXPECT_EQ(Length("\x80"), 0u) << "a continuation byte alone";
  EXPECT_EQ(Length("\xbf"), 0u);
  EXPECT_EQ(Length("\xc3"), 0u);
  EXPECT_EQ(Length("\xe2\x82"), 0u);
  EXPECT_EQ(Length("\xf0\x9f\x98"), 0u);
  EXPECT_EQ(Utf8SequenceLength("ab\xe2\x82", 2), 0u) << "cut by the end of the string";
  EXPECT_EQ(Length("\xc3("), 0u) << "second byte not a continuation";
  EXPECT_EQ(Length("\xe2\x82("), 0u) << "third byte not a continuation";
  EXPECT_EQ(Length("\xf0\x9f\x98("), 0u) << "fourth byte not a continuation";
}

TEST(TerminalWidthTest, OneColumnPerCharacter) {
  EXPECT_EQ(TerminalWidth(""), 0u);
  EXPECT_EQ(TerminalWidth("abc"), 3u);
  EXPECT_EQ(TerminalWidth("±"), 1u);
  EXPECT_EQ(TerminalWidth("±1.5 KiB"), 8u);
  EXPECT_EQ(TerminalWidth("h\xc3\xa9llo \xe2\x82\xac"), 7u);
}

TEST(PadTest, PadsToColumnsNotBytes) {
  EXPECT_EQ(PadLeft("±1 B", 6), "  ±1 B");
  EXPECT_EQ(PadRight("±1 B", 6), "±1 B  ");
  EXPECT_EQ(PadLeft("±", 1), "±") << "\"±\" is two bytes but one column";
  EXPECT_EQ(PadRight("±", 2), "± ");
  EXPECT_EQ(PadLeft("", 3), "   ");
  // Never cut: wider strings come back as they are.
  EXPECT_EQ(PadLeft("±123456", 3), "±123456");
  EXPECT_EQ(PadRight("±123456", 3), "±123456");
}

TEST(TruncateTest, CutsWholeCharactersAndEndsWithAnEllipsis) {
  EXPECT_EQ(Truncate("abcdef", 6), "abcdef");
  EXPECT_EQ(Truncate("abcdef", 10), "abcdef");
  EXPECT_EQ(Truncate("abcdef", 4), "abc…");
  // Multi-byte characters count once and are never split.
  EXPECT_EQ(Truncate("\xc3\xa9\xc3\xa9\xc3\xa9", 3), "\xc3\xa9\xc3\xa9\xc3\xa9");
  EXPECT_EQ(Truncate("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 3), "\xc3\xa9\xc3\xa9…");
  EXPECT_EQ(Truncate("a€b€c€", 4), "a€b…");
  EXPECT_EQ(Truncate("\xf0\x9f\x98\x80\xf0\x9f\x98\x80x", 2), "\xf0\x9f\x98\x80…");
  EXPECT_EQ(TerminalWidth(Truncate("±±±±±±±±", 5)), 5u);
  // An invalid byte counts as one character.
  EXPECT_EQ(Truncate("\xff\xff\xff\xff", 3), "\xff\xff…");
}

}  // namespace
}  // namespace heaprec::render
