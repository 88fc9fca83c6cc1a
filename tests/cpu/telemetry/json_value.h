// Test support: a small JSON parser and a JSON Schema validator for the subset
// docs/telemetry.schema.json uses (type, required, properties, additionalProperties, items,
// minimum, const, $ref to "#/$defs/<name>"). Deliberately independent of the library's writer.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace dissect::telemetry::test {

struct JsonValue {
  enum class Kind { null, boolean, integer, number, string, array, object };
  Kind kind = Kind::null;
  bool boolean = false;
  int64_t integer = 0;
  double number = 0;
  std::string string;
  std::vector<JsonValue> array;
  std::vector<std::pair<std::string, JsonValue>> object;  // in document order

  const JsonValue* find(const std::string& key) const;
  const JsonValue& at(const std::string& key) const;  // throws std::out_of_range
  bool has(const std::string& key) const { return find(key) != nullptr; }
};

// Throws std::runtime_error naming the offset on malformed input, duplicate keys included.
JsonValue parse_json(const std::string& text);

// Every violation, as "<json path>: <what>"; empty when `document` conforms to `schema`.
std::vector<std::string> validate(const JsonValue& document, const JsonValue& schema);

std::string read_text_file(const std::string& path);

}  // namespace dissect::telemetry::test
