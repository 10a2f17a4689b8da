// The one JSON writer of heaprec's outputs (report, diff and leaks --format json, the flame page's
// data). Streaming, with correct escaping: invalid UTF-8 from file and function names becomes
// U+FFFD, so the output always parses. No JSON library is among the CLI's dependencies and the
// documents are small and simple.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace heaprec::render {

class JsonWriter {
 public:
  enum class Style {
    kPretty,   // 2-space indent, one member per line; "key": value
    kCompact,  // no whitespace at all (the flame page's data)
  };
  struct Options {
    Style style = Style::kPretty;
    // Writes '<' as \u003c, so the document can sit inside an HTML <script> element.
    bool script_safe = false;
  };

  explicit JsonWriter(std::ostream& out) : JsonWriter(out, Options{}) {}
  JsonWriter(std::ostream& out, Options options) : out_(out), options_(options) {}

  // `on_one_line`: the container and everything in it on one line, members separated by ", "
  // (a pretty document's small records, like one point of a series).
  JsonWriter& BeginObject(bool on_one_line = false);
  JsonWriter& EndObject();
  JsonWriter& BeginArray(bool on_one_line = false);
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);  // inside an object, before each value
  JsonWriter& String(std::string_view value);
  JsonWriter& Int(int64_t value);
  JsonWriter& Double(double value, int decimals = 2);  // fixed-point; null when not finite
  JsonWriter& Significant(double value, int digits);   // "%.*g"; null when not finite
  JsonWriter& Bool(bool value);
  JsonWriter& Null();
  // A value that is already a JSON document (another writer's), written as it is: the caller
  // vouches that it is valid and, for a script-safe document, has no '<'.
  JsonWriter& Document(std::string_view json);

  // `value` as a JSON string literal, quotes included.
  static std::string Quote(std::string_view value, bool script_safe = false);

 private:
  struct Container {
    bool empty = true;
    bool one_line = false;
  };
  void BeforeValue();
  void Open(char bracket, bool one_line);
  void Close(char bracket);
  void Raw(std::string_view text);

  std::ostream& out_;
  Options options_;
  std::vector<Container> open_;
  bool after_key_ = false;
};

}  // namespace heaprec::render
