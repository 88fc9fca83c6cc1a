// The one text form of every JSON file dissect writes (telemetry per rank, results): nlohmann's
// ordered_json, so members keep the order they were added in, as the schemas document them.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace dissect::telemetry {

using Json = nlohmann::ordered_json;

// A measured value. An integral one is written as an integer ("3", not nlohmann's "3.0"), as the
// files written before this library were: they still compare byte for byte. NaN and the
// infinities become null (nlohmann's rule, and the old writer's).
inline Json number(double value) {
  constexpr double kExact = 9007199254740992.0;  // 2^53: every integer below it is a double
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < kExact) {
    return Json(static_cast<int64_t>(value));
  }
  return Json(value);
}

// Two spaces per level and one member per line so that files diff well, a newline at the end.
// Invalid UTF-8 (a host or device name read from the system) is replaced, not thrown: the file
// must still be written (telemetry failures are reported, never propagated).
inline std::string dump_document(const Json& json) {
  return json.dump(2, ' ', false, nlohmann::detail::error_handler_t::replace) + "\n";
}

}  // namespace dissect::telemetry
