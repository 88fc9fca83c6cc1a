// The GPU runners' measurements and progress in the suite's terms (bench/framework): each
// measurement as a Result, each run of a TimedMetric as a Summary (with every sample under --raw),
// and GpuProgress bound to a progress line. Host-only; in the CLI's experiments library, not in
// dissect_gpu_experiments (the GPU tests link that without the framework).
#pragma once

#include <cstdint>
#include <vector>

#include "dissect/bench/gpu_experiments.h"
#include "dissect/bench/progress.h"
#include "dissect/bench/results.h"
#include "measurement.h"

namespace dissect::bench {

// One Summary per run of `metric`, in its unit: `ns_per_unit` ns each (1e3 for us, 1 for ns).
// Percentiles as the runner computed them, `samples` per run, and the run's samples in
// measured order where the harness kept them (TimedMetric::samples_ns, --raw).
std::vector<Summary> run_summaries(const gpu::TimedMetric& metric, uint64_t samples, double ns_per_unit);

// A measurement of `config` as the suite's Result: experiment "gpu-<name>", the row's label, the
// engine, placement, PE layout and every knob, each metric in us (a "ns per message" in ns) with
// its SM-cycle twin ("<name> cycles") where it was timed in cycles, and the clocks it ran at.
Result to_result(const gpu::Measurement& measurement, const PePairConfig& config);
std::vector<Result> to_results(const std::vector<gpu::Measurement>& measurements,
                               const PePairConfig& config);

// A line per run of every measurement, "latency inline, run 2/3", the total growing as the
// runner plans its runs (GpuProgress). `progress` and `config` must outlive the runner's call.
void bind_progress(Progress& progress, PePairConfig& config);

}  // namespace dissect::bench
