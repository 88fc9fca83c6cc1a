// A minimal JSON writer: objects, arrays, strings (escaped), integers, booleans, null.
//
// Contract: single-threaded; the caller nests begin/end calls correctly (checked by assert only).
// Output is indented by two spaces per level, one member or element per line, so files diff well.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dissect::telemetry {

class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  // Names the next value inside an object.
  JsonWriter& key(std::string_view name);

  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(int64_t number);
  JsonWriter& value(uint64_t number);
  JsonWriter& value(int number) { return value(static_cast<int64_t>(number)); }
  JsonWriter& value(uint32_t number) { return value(static_cast<uint64_t>(number)); }
  JsonWriter& value(bool flag);
  JsonWriter& value(double number);  // shortest round-trip form; NaN and infinities as null
  JsonWriter& null();

  template <typename T>
  JsonWriter& field(std::string_view name, T content) {
    key(name);
    return value(content);
  }

  // The document so far; complete once every begin has its end.
  const std::string& text() const { return out_; }

 private:
  void before_value();
  void open(char bracket);
  void close(char bracket);
  void newline_and_indent();

  std::string out_;
  std::vector<bool> first_in_level_;
  bool after_key_ = false;
};

// `text` as a JSON string literal, quotes included.
std::string json_quote(std::string_view text);

}  // namespace dissect::telemetry
