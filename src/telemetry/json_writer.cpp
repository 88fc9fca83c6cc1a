#include "dissect/telemetry/json_writer.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <cassert>
#include <cstdio>

namespace dissect::telemetry {

std::string json_quote(std::string_view text) {
  std::string quoted = "\"";
  for (char raw : text) {
    auto c = static_cast<unsigned char>(raw);
    switch (c) {
      case '"': quoted += "\\\""; break;
      case '\\': quoted += "\\\\"; break;
      case '\b': quoted += "\\b"; break;
      case '\f': quoted += "\\f"; break;
      case '\n': quoted += "\\n"; break;
      case '\r': quoted += "\\r"; break;
      case '\t': quoted += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
          quoted += escaped;
        } else {
          quoted += raw;  // UTF-8 passes through unchanged
        }
    }
  }
  quoted += '"';
  return quoted;
}

void JsonWriter::newline_and_indent() {
  out_ += '\n';
  out_.append(2 * first_in_level_.size(), ' ');
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (first_in_level_.empty()) return;  // the top-level value
  if (!first_in_level_.back()) out_ += ',';
  first_in_level_.back() = false;
  newline_and_indent();
}

void JsonWriter::open(char bracket) {
  before_value();
  out_ += bracket;
  first_in_level_.push_back(true);
}

void JsonWriter::close(char bracket) {
  assert(!first_in_level_.empty() && !after_key_);
  bool empty = first_in_level_.back();
  first_in_level_.pop_back();
  if (!empty) newline_and_indent();
  out_ += bracket;
  if (first_in_level_.empty()) out_ += '\n';
}

JsonWriter& JsonWriter::begin_object() { open('{'); return *this; }
JsonWriter& JsonWriter::end_object() { close('}'); return *this; }
JsonWriter& JsonWriter::begin_array() { open('['); return *this; }
JsonWriter& JsonWriter::end_array() { close(']'); return *this; }

JsonWriter& JsonWriter::key(std::string_view name) {
  before_value();
  out_ += json_quote(name);
  out_ += ": ";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) {
  before_value();
  out_ += json_quote(text);
  return *this;
}

JsonWriter& JsonWriter::value(int64_t number) {
  before_value();
  out_ += std::to_string(number);
  return *this;
}

JsonWriter& JsonWriter::value(uint64_t number) {
  before_value();
  out_ += std::to_string(number);
  return *this;
}

JsonWriter& JsonWriter::value(bool flag) {
  before_value();
  out_ += flag ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::value(double number) {
  if (!std::isfinite(number)) return null();
  before_value();
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", number);
  // Prefer the shortest form that reads back to the same double.
  for (int precision = 6; precision < 17; ++precision) {
    char shorter[32];
    std::snprintf(shorter, sizeof shorter, "%.*g", precision, number);
    if (std::strtod(shorter, nullptr) == number) {
      std::snprintf(text, sizeof text, "%s", shorter);
      break;
    }
  }
  out_ += text;
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  out_ += "null";
  return *this;
}

}  // namespace dissect::telemetry
