// Telemetry configuration: the DISSECT_TELEMETRY_* environment variables, parsed once.
//
// Contract
// - config_from_environment() reads the process environment; parse_config() takes any lookup
//   function, so tests build a configuration without touching the environment. Tests may also
//   fill a Config by hand.
// - A value that cannot be used is replaced by its default and reported as one line on stderr
//   naming the variable and the value; parsing never fails. LATENCY_SAMPLE that is not a power of
//   two is rounded up to the next one with exactly one line saying so (6 -> 8), as the page says.
// - Only ENABLE exactly "1" turns telemetry on.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dissect/nic/qp_counters.h"

namespace dissect::telemetry {

inline constexpr const char* kEnvPrefix = "DISSECT_TELEMETRY_";
inline constexpr uint64_t kMaxLatencySample = uint64_t{1} << 24;
inline constexpr size_t kMaxOutputDirLength = 3072;  // leaves room for the file name in PATH_MAX

struct Config {
  bool enabled = false;
  std::string output_dir = "/tmp";
  uint32_t histogram_buckets = 5;
  uint64_t histogram_interval_ns = 30000;
  uint64_t latency_sample = 1;          // N in effect, always a power of two
  std::vector<std::string> hw_counters;  // allow-list of canonical names; empty means all
  uint32_t sample_ms = 0;                // sampler period; 0 means no sampler thread
  bool debug = false;
  std::string transport = "dissect";     // the "transport" label in the JSON (set by the caller)

  HistogramShape histogram() const { return {histogram_buckets, histogram_interval_ns, latency_sample}; }
  bool counter_allowed(const std::string& canonical_name) const;
};

// Returns the value of the variable named (full name, prefix included), or null when unset.
using EnvironmentLookup = std::function<const char*(const char* name)>;

Config parse_config(const EnvironmentLookup& lookup);
Config config_from_environment();

// Smallest power of two >= value (value >= 1), capped at kMaxLatencySample.
uint64_t round_up_to_power_of_two(uint64_t value);

}  // namespace dissect::telemetry
