// One row of a GPU latency experiment while its runs are measured (bench/gpu/harness.cuh fills
// it): per-run percentiles in ns and, where timed in clock64, in SM cycles. Not a second result
// model: the runner turns each into the suite's Result (to_report.h, to_result) before it returns,
// and only Results reach the report. Host-only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dissect::bench::gpu {

struct TimedMetric {
  std::string name;                 // "issue", "put+completion", "round trip", "floor"
  // Each run's samples in measured order, ns; kept only under set_keep_gpu_samples(true) (--raw).
  std::vector<std::vector<double>> samples_ns;
  std::vector<double> p50_ns;       // one per run
  std::vector<double> p10_ns;
  std::vector<double> p90_ns;
  // The same percentiles in SM cycles (clock64), where the metric was timed in cycles: Figure 5
  // fits each time against the SM clock, and a cycle count is what stays when the clock moves.
  std::vector<double> p50_cycles;
  std::vector<double> p10_cycles;
  std::vector<double> p90_cycles;
  // Samples a run's percentiles stand for, where they are not the run's timed operations (the
  // CQEs a run left in its completion queue): 0, the operations.
  uint64_t samples_per_run = 0;
};

struct Measurement {
  std::string name;                  // e.g. "latency", "ordering", "inline-sweep", "mechanism-floor"
  std::string variant;               // e.g. "inline", "pointer", the ordering key, "64B"
  std::string provider = "softnic";
  std::string engine;                // "gpu-kernel" | "host-thread"
  std::string placement;             // "gpu" | "host"
  std::string pe_layout;             // "one-gpu" | "two-gpus"
  std::string ordering;              // ordering policy key (gda/ordering.h)
  uint32_t payload_bytes = 8;
  bool inline_payload = true;
  double sm_clock_mhz = 0;           // effective, clock64 against globaltimer (mean over runs)
  double globaltimer_step_ns = 0;    // smallest nonzero globaltimer delta seen
  std::vector<TimedMetric> metrics;
  bool payload_validated = false;    // every run's payload checked byte-exact
  std::string note;                  // anything that went wrong (error CQE, skipped ...)
  std::string library;               // a peer path's library and its version (headers' macros);
  std::string library_version;       // empty for mini-gda
};

// Median of the per-run p50s, ns.
double summary_p50(const TimedMetric& metric);

}  // namespace dissect::bench::gpu
