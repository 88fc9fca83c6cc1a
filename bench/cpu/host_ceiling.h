// The softnic host engine's own capacity (the host-thread counterpart of the GPU engine's
// nic-ceiling), so that an experiment whose WQEs the host engine executes (the proxy paths, `rate`)
// can put the model's ceiling beside its rate instead of inferring the bottleneck.
//
// How: `qps` loopback QPs, `depth` pre-built 8 B pointer writes each (16 per doorbell, the last of
// each batch signalled, every write to its own destination word), posted with the engine stopped;
// then the engine's `engine_threads` threads start and the clock runs until every QP's last CQE.
// The threads' start is inside the timed span: tens of microseconds beside the milliseconds of
// work where the threads get free cores at once (a loaded 2-core machine showed ~7 ms a round).
#pragma once

#include <cstdint>
#include <string>

namespace dissect::bench {

struct HostCeilingPoint {
  double mmsgs = 0;       // median over rounds, M messages per second
  bool validated = false;  // every destination word of every round holds its write's value
};

HostCeilingPoint measure_host_engine_ceiling(uint32_t engine_threads, uint32_t qps, uint32_t depth,
                                             uint32_t rounds, const std::string& nic_profile);

// The same, measured once per (threads, qps, profile) in this process (depth 16384, 5 rounds).
double host_engine_ceiling(uint32_t engine_threads, uint32_t qps, const std::string& nic_profile);

}  // namespace dissect::bench
