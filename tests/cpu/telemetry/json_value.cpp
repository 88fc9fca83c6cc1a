#include "json_value.h"

#include <cctype>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace dissect::telemetry::test {
namespace {

class Parser {
 public:
  explicit Parser(const std::string& text) : text_(text) {}

  JsonValue document() {
    JsonValue value = parse_value();
    skip_space();
    if (position_ != text_.size()) fail("trailing characters");
    return value;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    throw std::runtime_error("JSON error at offset " + std::to_string(position_) + ": " + what);
  }
  void skip_space() {
    while (position_ < text_.size() && std::string(" \t\r\n").find(text_[position_]) != std::string::npos)
      ++position_;
  }
  char peek() {
    skip_space();
    if (position_ >= text_.size()) fail("unexpected end");
    return text_[position_];
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++position_;
  }
  bool literal(const char* word) {
    size_t length = std::char_traits<char>::length(word);
    if (text_.compare(position_, length, word) != 0) return false;
    position_ += length;
    return true;
  }

  JsonValue parse_value() {
    char c = peek();
    JsonValue value;
    if (c == '{') return parse_object();
    if (c == '[') return parse_array();
    if (c == '"') {
      value.kind = JsonValue::Kind::string;
      value.string = parse_string();
    } else if (literal("true")) {
      value.kind = JsonValue::Kind::boolean;
      value.boolean = true;
    } else if (literal("false")) {
      value.kind = JsonValue::Kind::boolean;
    } else if (literal("null")) {
      value.kind = JsonValue::Kind::null;
    } else {
      value = parse_number();
    }
    return value;
  }

  JsonValue parse_number() {
    size_t start = position_;
    if (text_[position_] == '-') ++position_;
    if (position_ >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[position_])))
      fail("expected a value");
    if (text_[position_] == '0' && position_ + 1 < text_.size() &&
        std::isdigit(static_cast<unsigned char>(text_[position_ + 1])))
      fail("leading zero");
    bool fraction = false;
    while (position_ < text_.size() && std::string("0123456789.eE+-").find(text_[position_]) != std::string::npos) {
      if (std::string(".eE").find(text_[position_]) != std::string::npos) fraction = true;
      ++position_;
    }
    std::string token = text_.substr(start, position_ - start);
    JsonValue value;
    if (fraction) {
      value.kind = JsonValue::Kind::number;
      value.number = std::stod(token);
    } else {
      value.kind = JsonValue::Kind::integer;
      value.integer = std::stoll(token);
      value.number = static_cast<double>(value.integer);
    }
    return value;
  }

  std::string parse_string() {
    expect('"');
    std::string out;
    while (true) {
      if (position_ >= text_.size()) fail("unterminated string");
      char c = text_[position_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("raw control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (position_ >= text_.size()) fail("unterminated escape");
      char e = text_[position_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          if (position_ + 4 > text_.size()) fail("short \\u escape");
          unsigned code = std::stoul(text_.substr(position_, 4), nullptr, 16);
          position_ += 4;
          if (code >= 0x80) fail("test parser only decodes \\u escapes below 0x80");
          out += static_cast<char>(code);
          break;
        }
        default: fail("bad escape");
      }
    }
  }

  JsonValue parse_array() {
    expect('[');
    JsonValue value;
    value.kind = JsonValue::Kind::array;
    if (peek() == ']') {
      ++position_;
      return value;
    }
    while (true) {
      value.array.push_back(parse_value());
      if (peek() == ']') {
        ++position_;
        return value;
      }
      expect(',');
    }
  }

  JsonValue parse_object() {
    expect('{');
    JsonValue value;
    value.kind = JsonValue::Kind::object;
    if (peek() == '}') {
      ++position_;
      return value;
    }
    while (true) {
      if (peek() != '"') fail("expected a key");
      std::string key = parse_string();
      if (value.has(key)) fail("duplicate key " + key);
      expect(':');
      value.object.emplace_back(key, parse_value());
      if (peek() == '}') {
        ++position_;
        return value;
      }
      expect(',');
    }
  }

  const std::string& text_;
  size_t position_ = 0;
};

const char* kind_name(JsonValue::Kind kind) {
  switch (kind) {
    case JsonValue::Kind::null: return "null";
    case JsonValue::Kind::boolean: return "boolean";
    case JsonValue::Kind::integer: return "integer";
    case JsonValue::Kind::number: return "number";
    case JsonValue::Kind::string: return "string";
    case JsonValue::Kind::array: return "array";
    case JsonValue::Kind::object: return "object";
  }
  return "?";
}

bool matches_type(const JsonValue& value, const std::string& type) {
  if (type == "number") return value.kind == JsonValue::Kind::integer || value.kind == JsonValue::Kind::number;
  return type == kind_name(value.kind);
}

class Validator {
 public:
  explicit Validator(const JsonValue& root) : root_(root) {}

  void check(const JsonValue& value, const JsonValue& schema, const std::string& path) {
    if (const JsonValue* reference = schema.find("$ref")) {
      check(value, resolve(reference->string, path), path);
      return;
    }
    if (!check_type(value, schema, path)) return;
    if (const JsonValue* constant = schema.find("const")) {
      if (constant->kind != value.kind || constant->string != value.string || constant->integer != value.integer)
        errors.push_back(path + ": does not equal the schema's const");
    }
    if (const JsonValue* minimum = schema.find("minimum")) {
      if ((value.kind == JsonValue::Kind::integer || value.kind == JsonValue::Kind::number) &&
          value.number < minimum->number)
        errors.push_back(path + ": " + std::to_string(value.number) + " is below the minimum");
    }
    if (value.kind == JsonValue::Kind::object) check_object(value, schema, path);
    if (value.kind == JsonValue::Kind::array) check_array(value, schema, path);
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
    const JsonValue* type = schema.find("type");
    if (type == nullptr) return true;
    bool ok = false;
    std::string expected;
    if (type->kind == JsonValue::Kind::string) {
      ok = matches_type(value, type->string);
      expected = type->string;
    } else {
      for (const auto& option : type->array) {
        ok = ok || matches_type(value, option.string);
        expected += option.string + " ";
      }
    }
    if (!ok) errors.push_back(path + ": is " + kind_name(value.kind) + ", expected " + expected);
    return ok;
  }

  void check_object(const JsonValue& value, const JsonValue& schema, const std::string& path) {
    if (const JsonValue* required = schema.find("required")) {
      for (const auto& name : required->array)
        if (!value.has(name.string)) errors.push_back(path + ": missing required key " + name.string);
    }
    const JsonValue* properties = schema.find("properties");
    const JsonValue* additional = schema.find("additionalProperties");
    for (const auto& [key, member] : value.object) {
      const JsonValue* property = properties != nullptr ? properties->find(key) : nullptr;
      if (property != nullptr) {
        check(member, *property, path + "." + key);
      } else if (additional != nullptr && additional->kind == JsonValue::Kind::boolean) {
        if (!additional->boolean) errors.push_back(path + ": unexpected key " + key);
      } else if (additional != nullptr) {
        check(member, *additional, path + "." + key);
      }
    }
  }

  void check_array(const JsonValue& value, const JsonValue& schema, const std::string& path) {
    const JsonValue* items = schema.find("items");
    if (items == nullptr) return;
    for (size_t i = 0; i < value.array.size(); ++i)
      check(value.array[i], *items, path + "[" + std::to_string(i) + "]");
  }

  const JsonValue& root_;
};

}  // namespace

const JsonValue* JsonValue::find(const std::string& key) const {
  for (const auto& [name, member] : object)
    if (name == key) return &member;
  return nullptr;
}

const JsonValue& JsonValue::at(const std::string& key) const {
  const JsonValue* member = find(key);
  if (member == nullptr) throw std::out_of_range("no key " + key);
  return *member;
}

JsonValue parse_json(const std::string& text) { return Parser(text).document(); }

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
