#include "dissect/proxy/config.h"

#include <cstring>
#include <string>

#include "dissect/common/error.h"
#include "dissect/mlx5/ring.h"

namespace dissect::proxy {

const char* to_string(Handoff handoff) {
  return handoff == Handoff::tuned ? "tuned" : "baseline";
}

Handoff handoff_from_string(const char* name) {
  if (std::strcmp(name, "tuned") == 0) return Handoff::tuned;
  if (std::strcmp(name, "baseline") == 0) return Handoff::baseline;
  throw InvalidArgument(std::string("unknown proxy handoff '") + name + "' (baseline or tuned)");
}

namespace {
void require(bool ok, const char* field, uint64_t value, const char* rule) {
  if (!ok) {
    throw InvalidArgument(std::string("proxy config: ") + field + " = " + std::to_string(value) +
                          " (" + rule + ")");
  }
}
}  // namespace

void validate(const ProxyConfig& c) {
  require(c.workers >= 1 && c.workers <= 256, "workers", c.workers, "1..256");
  require(c.rings >= c.workers && c.rings <= 4096, "rings", c.rings, "workers..4096: every worker serves a ring");
  require(mlx5::is_power_of_two(c.ring_entries) && c.ring_entries >= 2 && c.ring_entries <= (1u << 20),
          "ring_entries", c.ring_entries, "a power of two, 2..2^20");
  require(c.batch >= 1 && c.batch <= 64, "batch", c.batch, "1..64");
  require(c.timeout_ns > 0, "timeout_ns", c.timeout_ns, "> 0");
  require((c.completion_counters == nullptr) == (c.completion_counters_for_producer == nullptr),
          "completion_counters_for_producer", reinterpret_cast<uintptr_t>(c.completion_counters_for_producer),
          "give both completion counter addresses or neither");
  for (int core : c.cores) require(core >= 0, "cores[]", static_cast<uint64_t>(core), ">= 0");
}

}  // namespace dissect::proxy
