// The GPU runners' results and progress in the suite's terms (bench/framework): each run of a
// GpuMetric as a Summary (with every sample under --raw), and GpuProgress bound to a progress
// line. Host-only; in the CLI's experiments library, not in dissect_gpu_experiments (the GPU
// tests link that without the framework).
#pragma once

#include <cstdint>
#include <vector>

#include "dissect/bench/gpu_experiments.h"
#include "dissect/bench/progress.h"
#include "dissect/bench/results.h"

namespace dissect::bench {

// One Summary per run of `metric`, in its unit: `ns_per_unit` ns each (1e3 for us, 1 for ns).
// Percentiles as the runner computed them, `samples` per run, and the run's samples in
// measured order where the harness kept them (GpuMetric::samples_ns, --raw).
std::vector<Summary> run_summaries(const GpuMetric& metric, uint64_t samples, double ns_per_unit);

// A line per run of every measurement, "latency inline, run 2/3", the total growing as the
// runner plans its runs (GpuProgress). `progress` and `config` must outlive the runner's call.
void bind_progress(Progress& progress, GpuExperimentConfig& config);

}  // namespace dissect::bench
