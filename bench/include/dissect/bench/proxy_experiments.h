// mini-proxy experiments on the CPU path: host threads are the producers (standing in for GPU
// threads), the softnic host-thread engine is the NIC. Every result says so, and records each
// worker CPU's clock state (Appendix C.1). The `dissect` subcommands proxy-latency, proxy-rate and
// proxy-clock (bench/proxy/) call these and turn them into bench::Result rows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dissect/bench/results.h"
#include "dissect/proxy/config.h"
#include "dissect/proxy/placement.h"

namespace dissect::bench {

class Progress;  // dissect/bench/progress.h: a line per finished case on stderr

inline constexpr const char* PROXY_PRODUCER = "host producer (host threads standing in for GPU threads)";

struct ProxyPlacement {
  bool pin = false;
  std::vector<int> cores;  // worker w on cores[w % size]; empty: unpinned
};

// --- Table 3, proxy rows: issue (enqueue), put+completion, round trip; baseline vs tuned -------
struct ProxyLatencyOptions {
  uint64_t iterations = 20000;
  uint64_t warmup = 1000;
  uint64_t runs = 3;
  uint32_t ring_entries = 1024;
  ProxyPlacement placement;
  Progress* progress = nullptr;  // told of every finished row and run
};

struct ProxyLatencyRow {
  proxy::Handoff handoff;
  std::vector<Summary> issue, put_completion, round_trip;  // us, one Summary per run
  bool payload_validated = false;
};

struct ProxyLatencyResult {
  std::vector<ProxyLatencyRow> rows;        // baseline, tuned
  std::vector<Summary> store16_reference;   // one 16 B release store to host memory, us, same run
  std::vector<proxy::CpuClockState> worker_clocks;
  std::string placement;                    // how the worker was placed
};
ProxyLatencyResult measure_proxy_latency(const ProxyLatencyOptions& options);

// --- Figure 7: 8 B message rate against workers, at batch 1 and 16 -----------------------------
struct ProxyRateOptions {
  std::vector<uint32_t> workers = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<uint32_t> batches = {1, 16};
  uint64_t messages = 400000;  // per point and run, spread over the producers
  uint64_t runs = 3;
  uint32_t ring_entries = 1024;
  proxy::Handoff handoff = proxy::Handoff::tuned;
  ProxyPlacement placement;
  uint32_t engine_threads = 1;   // softnic host engine threads
  Progress* progress = nullptr;  // told of every finished point
};

struct ProxyRatePoint {
  uint32_t workers = 0, rings = 0, producers = 0, batch = 0;
  std::vector<double> rate_mmsgs;   // million messages per second, one per run
  double mean_chain = 0;            // descriptors per post (last run)
  double worker_busy = 0;           // fraction of worker polling passes that did work (last run)
  double worker_full = 0;           // fraction that ended with the send queue full (last run)
  double ceiling_mmsgs = 0;         // the host engine's own rate, same threads and QPs (host-nic-ceiling)
  std::string saturated;            // what limited this point, in words
  bool payload_validated = false;
  std::vector<proxy::CpuClockState> worker_clocks;
};
std::vector<ProxyRatePoint> measure_proxy_rate(const ProxyRateOptions& options);

// --- Appendix C.1: cold (after idle) against warm (after a busy warm-up) ---------------------
struct ProxyClockOptions {
  uint64_t idle_ms = 2000;     // everything stopped before the cold measurement
  uint64_t warmup_ms = 1000;   // proxy busy before the warm measurement
  uint64_t iterations = 2000;  // put+completion samples per state
  proxy::Handoff handoff = proxy::Handoff::tuned;
  ProxyPlacement placement;
};

struct ProxyClockState {
  std::string state;  // cold | warm
  Summary put_completion;  // us
  std::vector<proxy::CpuClockState> clocks_before, clocks_after;
};
std::vector<ProxyClockState> measure_proxy_clock(const ProxyClockOptions& options);

// Shared by the subcommands: every clock state as Result::environment entries.
void add_clock_environment(const std::vector<proxy::CpuClockState>& clocks, const std::string& prefix,
                           std::vector<std::pair<std::string, std::string>>* environment);

}  // namespace dissect::bench
