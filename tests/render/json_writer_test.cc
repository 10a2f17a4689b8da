// JSON string escaping and structure of the hand-written JSON writer.
#include "render/json_writer.h"

#include <gtest/gtest.h>

#include <sstream>

namespace heaprec::render {
namespace {

TEST(JsonWriterTest, QuoteEscapes) {
  EXPECT_EQ(JsonWriter::Quote("plain"), "\"plain\"");
  EXPECT_EQ(JsonWriter::Quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(JsonWriter::Quote("\n\t\r\x01"), "\"\\n\\t\\r\\u0001\"");
  EXPECT_EQ(JsonWriter::Quote("h\xc3\xa9llo \xe2\x82\xac"), "\"h\xc3\xa9llo \xe2\x82\xac\"");
  // Invalid UTF-8: stray continuation, truncated sequence, overlong form, surrogate.
  EXPECT_EQ(JsonWriter::Quote("\x80"), "\"\\ufffd\"");
  EXPECT_EQ(JsonWriter::Quote("\xe2\x82"), "\"\\ufffd\\ufffd\"");
  EXPECT_EQ(JsonWriter::Quote("\xc0\xaf"), "\"\\ufffd\\ufffd\"");
  EXPECT_EQ(JsonWriter::Quote("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");
}

TEST(JsonWriterTest, NestedStructure) {
  std::ostringstream out;
  JsonWriter j(out);
  j.BeginObject();
  j.Key("a").Int(-1);
  j.Key("b").BeginArray();
  j.Double(1.005).Null();
  j.EndArray();
  j.Key("c").BeginObject().EndObject();
  j.Key("d").BeginArray().EndArray();
  j.EndObject();
  EXPECT_EQ(out.str(),
            "{\n  \"a\": -1,\n  \"b\": [\n    1.00,\n    null\n  ],\n  \"c\": {},\n  \"d\": []\n}");
}

}  // namespace
}  // namespace heaprec::render
