// A minimal streaming JSON writer (pretty-printed, 2-space indent) for the report's --format json;
// no JSON library is among the project's dependencies and the output is small and flat.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace heaprec::cli {

class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& out) : out_(out) {}

  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);  // inside an object, before each value
  JsonWriter& String(std::string_view value);
  JsonWriter& Int(int64_t value);
  JsonWriter& Double(double value);  // two decimals; null when not finite
  JsonWriter& Null();

  // `value` as a JSON string literal, quotes included. Invalid UTF-8 becomes U+FFFD so the
  // output always parses.
  static std::string Quote(std::string_view value);

 private:
  void BeforeValue();
  void Open(char bracket);
  void Close(char bracket);

  std::ostream& out_;
  std::vector<bool> empty_;  // per open container: nothing written in it yet
  bool after_key_ = false;
};

}  // namespace heaprec::cli
