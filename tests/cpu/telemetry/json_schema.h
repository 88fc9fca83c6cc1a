// Test support: JSON documents read with nlohmann-json, and a validator for the subset of JSON
// Schema that docs/telemetry.schema.json uses (type, required, properties, additionalProperties,
// items, minimum, const, $ref to "#/$defs/<name>"). Independent of how the library writes JSON.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dissect::telemetry::test {

using JsonValue = nlohmann::ordered_json;

// Throws std::runtime_error naming the offset on malformed input, and on a key given twice in one
// object (nlohmann would keep the last one; a writer that repeats a key has a bug worth seeing).
JsonValue parse_json(const std::string& text);

// Every violation, as "<json path>: <what>"; empty when `document` conforms to `schema`.
std::vector<std::string> validate(const JsonValue& document, const JsonValue& schema);

std::string read_text_file(const std::string& path);

}  // namespace dissect::telemetry::test
