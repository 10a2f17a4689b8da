#include "render/json_writer.h"

#include <cmath>
#include <cstdio>

#include "render/utf8.h"

namespace heaprec::render {

std::string JsonWriter::Quote(std::string_view s, bool script_safe) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '<':
        out += script_safe ? "\\u003c" : "<";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else if (size_t len = Utf8SequenceLength(s, i); len == 0) {
          out += "\\ufffd";
        } else {
          out.append(s.substr(i, len));
          i += len;
          continue;
        }
    }
    ++i;
  }
  return out + "\"";
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (open_.empty()) return;
  Container& c = open_.back();
  bool first = c.empty;
  c.empty = false;
  if (!first) out_ << ",";
  if (options_.style == Style::kCompact) return;
  if (c.one_line) {
    if (!first) out_ << " ";
    return;
  }
  out_ << "\n" << std::string(2 * open_.size(), ' ');
}

void JsonWriter::Open(char bracket, bool one_line) {
  BeforeValue();
  out_ << bracket;
  bool inside_one_line = !open_.empty() && open_.back().one_line;
  open_.push_back({.empty = true, .one_line = one_line || inside_one_line});
}

void JsonWriter::Close(char bracket) {
  Container c = open_.back();
  open_.pop_back();
  if (!c.empty && !c.one_line && options_.style == Style::kPretty) {
    out_ << "\n" << std::string(2 * open_.size(), ' ');
  }
  out_ << bracket;
}

void JsonWriter::Raw(std::string_view text) {
  BeforeValue();
  out_ << text;
}

JsonWriter& JsonWriter::BeginObject(bool on_one_line) {
  Open('{', on_one_line);
  return *this;
}
JsonWriter& JsonWriter::EndObject() {
  Close('}');
  return *this;
}
JsonWriter& JsonWriter::BeginArray(bool on_one_line) {
  Open('[', on_one_line);
  return *this;
}
JsonWriter& JsonWriter::EndArray() {
  Close(']');
  return *this;
}

JsonWriter& JsonWriter::Key(std::string_view key) {
  BeforeValue();
  out_ << Quote(key, options_.script_safe) << (options_.style == Style::kCompact ? ":" : ": ");
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view value) {
  Raw(Quote(value, options_.script_safe));
  return *this;
}

JsonWriter& JsonWriter::Int(int64_t value) {
  Raw(std::to_string(value));
  return *this;
}

JsonWriter& JsonWriter::Double(double value, int decimals) {
  if (!std::isfinite(value)) return Null();
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  Raw(buf);
  return *this;
}

JsonWriter& JsonWriter::Significant(double value, int digits) {
  if (!std::isfinite(value)) return Null();
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, value);
  Raw(buf);
  return *this;
}

JsonWriter& JsonWriter::Bool(bool value) {
  Raw(value ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::Null() {
  Raw("null");
  return *this;
}

JsonWriter& JsonWriter::Document(std::string_view json) {
  Raw(json);
  return *this;
}

}  // namespace heaprec::render
