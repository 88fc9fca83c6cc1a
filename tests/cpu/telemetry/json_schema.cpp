#include "json_schema.h"

#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

namespace dissect::telemetry::test {
namespace {

// nlohmann's parser has no duplicate-key mode; its callback sees every key with its depth.
class DuplicateKeys {
 public:
  bool operator()(int depth, nlohmann::json::parse_event_t event, JsonValue& parsed) {
    using Event = nlohmann::json::parse_event_t;
    const size_t level = static_cast<size_t>(depth);
    if (event == Event::object_start) {
      keys_.resize(level + 1);
      keys_[level].clear();
    } else if (event == Event::key) {
      if (!keys_.at(level - 1).insert(parsed.get<std::string>()).second) {
        throw std::runtime_error("JSON error: duplicate key " + parsed.get<std::string>());
      }
    }
    return true;
  }

 private:
  std::vector<std::set<std::string>> keys_;
};

bool matches_type(const JsonValue& value, const std::string& type) {
  if (type == "integer") return value.is_number_integer();
  if (type == "number") return value.is_number();
  return type == value.type_name();
}

class Validator {
 public:
  explicit Validator(const JsonValue& root) : root_(root) {}

  void check(const JsonValue& value, const JsonValue& schema, const std::string& path) {
    if (schema.contains("$ref")) {
      check(value, resolve(schema["$ref"].get<std::string>(), path), path);
      return;
    }
    if (!check_type(value, schema, path)) return;
    if (schema.contains("const") && schema["const"] != value) {
      errors.push_back(path + ": does not equal the schema's const");
    }
    if (schema.contains("minimum") && value.is_number() &&
        value.get<double>() < schema["minimum"].get<double>()) {
      errors.push_back(path + ": " + value.dump() + " is below the minimum");
    }
    if (value.is_object()) check_object(value, schema, path);
    if (value.is_array()) check_array(value, schema, path);
  }

  std::vector<std::string> errors;

 private:
  const JsonValue& resolve(const std::string& reference, const std::string& path) {
    const std::string prefix = "#/$defs/";
    if (reference.compare(0, prefix.size(), prefix) != 0)
      throw std::runtime_error(path + ": unsupported $ref " + reference);
    return root_.at("$defs").at(reference.substr(prefix.size()));
  }

  bool check_type(const JsonValue& value, const JsonValue& schema, const std::string& path) {
    if (!schema.contains("type")) return true;
    const JsonValue& type = schema["type"];
    const JsonValue options = type.is_string() ? JsonValue::array({type}) : type;
    for (const auto& option : options)
      if (matches_type(value, option.get<std::string>())) return true;
    errors.push_back(path + ": is " + value.type_name() + ", expected " + type.dump());
    return false;
  }

  void check_object(const JsonValue& value, const JsonValue& schema, const std::string& path) {
    for (const auto& name : schema.value("required", JsonValue::array()))
      if (!value.contains(name.get<std::string>()))
        errors.push_back(path + ": missing required key " + name.get<std::string>());
    const JsonValue properties = schema.value("properties", JsonValue::object());
    const JsonValue* additional = schema.contains("additionalProperties") ? &schema["additionalProperties"] : nullptr;
    for (const auto& [key, member] : value.items()) {
      if (properties.contains(key)) {
        check(member, properties[key], path + "." + key);
      } else if (additional != nullptr && additional->is_boolean()) {
        if (!additional->get<bool>()) errors.push_back(path + ": unexpected key " + key);
      } else if (additional != nullptr) {
        check(member, *additional, path + "." + key);
      }
    }
  }

  void check_array(const JsonValue& value, const JsonValue& schema, const std::string& path) {
    if (!schema.contains("items")) return;
    for (size_t i = 0; i < value.size(); ++i)
      check(value[i], schema["items"], path + "[" + std::to_string(i) + "]");
  }

  const JsonValue& root_;
};

}  // namespace

JsonValue parse_json(const std::string& text) {
  try {
    return JsonValue::parse(text, DuplicateKeys());
  } catch (const nlohmann::json::parse_error& e) {
    throw std::runtime_error(std::string("JSON error at offset ") + std::to_string(e.byte) + ": " + e.what());
  }
}

std::vector<std::string> validate(const JsonValue& document, const JsonValue& schema) {
  Validator validator(schema);
  validator.check(document, schema, "$");
  return validator.errors;
}

std::string read_text_file(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error("cannot read " + path);
  std::stringstream content;
  content << file.rdbuf();
  return content.str();
}

}  // namespace dissect::telemetry::test
