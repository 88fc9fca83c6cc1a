#include "dissect/telemetry/config.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <optional>

#include "report.h"

namespace dissect::telemetry {
namespace {

std::string full_name(const char* suffix) { return std::string(kEnvPrefix) + suffix; }

// A decimal unsigned integer with nothing around it; nullopt for anything else.
std::optional<uint64_t> parse_unsigned(const char* text) {
  if (text == nullptr || *text < '0' || *text > '9') return std::nullopt;
  errno = 0;
  char* end = nullptr;
  unsigned long long value = std::strtoull(text, &end, 10);
  if (errno != 0 || *end != '\0') return std::nullopt;
  return static_cast<uint64_t>(value);
}

// Reads VAR as an integer in [low, high]; unset gives the default silently, anything else that is
// not in range gives the default with one line naming the variable and the value.
uint64_t read_ranged(const EnvironmentLookup& lookup, const char* suffix, uint64_t fallback,
                     uint64_t low, uint64_t high) {
  std::string name = full_name(suffix);
  const char* text = lookup(name.c_str());
  if (text == nullptr || *text == '\0') return fallback;
  std::optional<uint64_t> value = parse_unsigned(text);
  if (!value || *value < low || *value > high) {
    report(name + "='" + text + "' is not an integer in [" + std::to_string(low) + ", " +
           std::to_string(high) + "]; using " + std::to_string(fallback));
    return fallback;
  }
  return *value;
}

std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    std::string name = list.substr(start, comma - start);
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    if (!name.empty()) names.push_back(name);
    start = comma + 1;
  }
  return names;
}

uint64_t read_latency_sample(const EnvironmentLookup& lookup) {
  uint64_t asked = read_ranged(lookup, "LATENCY_SAMPLE", 1, 1, kMaxLatencySample);
  uint64_t used = round_up_to_power_of_two(asked);
  if (used != asked) {
    report(full_name("LATENCY_SAMPLE") + "=" + std::to_string(asked) +
           " is not a power of two; using " + std::to_string(used));
  }
  return used;
}

std::string read_output_dir(const EnvironmentLookup& lookup, bool& usable) {
  std::string name = full_name("OUTPUT_DIR");
  const char* text = lookup(name.c_str());
  usable = true;
  if (text == nullptr || *text == '\0') return "/tmp";
  std::string dir = text;
  if (dir.size() > kMaxOutputDirLength) {
    // The page's rule: an over-long path keeps telemetry off rather than truncating it silently.
    report(name + " is " + std::to_string(dir.size()) + " characters, more than " +
           std::to_string(kMaxOutputDirLength) + "; telemetry stays off");
    usable = false;
  }
  return dir;
}

}  // namespace

bool Config::counter_allowed(const std::string& canonical_name) const {
  return hw_counters.empty() ||
         std::find(hw_counters.begin(), hw_counters.end(), canonical_name) != hw_counters.end();
}

uint64_t round_up_to_power_of_two(uint64_t value) {
  uint64_t power = 1;
  while (power < value && power < kMaxLatencySample) power <<= 1;
  return power;
}

Config parse_config(const EnvironmentLookup& lookup) {
  Config config;
  std::string enable_name = full_name("ENABLE");
  const char* enable = lookup(enable_name.c_str());
  config.enabled = enable != nullptr && std::string(enable) == "1";
  const char* debug = lookup(full_name("DEBUG").c_str());
  config.debug = debug != nullptr;
  if (!config.enabled) return config;

  bool dir_usable = true;
  config.output_dir = read_output_dir(lookup, dir_usable);
  config.enabled = dir_usable;
  config.histogram_buckets =
      static_cast<uint32_t>(read_ranged(lookup, "HISTOGRAM_BUCKETS", 5, 1, kMaxHistogramBuckets));
  config.histogram_interval_ns =
      read_ranged(lookup, "HISTOGRAM_INTERVAL_NS", 30000, 1, kMaxHistogramIntervalNs);
  config.latency_sample = read_latency_sample(lookup);
  const char* counters = lookup(full_name("HW_COUNTERS").c_str());
  if (counters != nullptr) config.hw_counters = split_names(counters);
  config.sample_ms = static_cast<uint32_t>(read_ranged(lookup, "SAMPLE_MS", 0, 0, 3600 * 1000));
  return config;
}

Config config_from_environment() {
  return parse_config([](const char* name) -> const char* { return std::getenv(name); });
}

}  // namespace dissect::telemetry
