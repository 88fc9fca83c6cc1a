// The GPU path's message rate with telemetry off and on, in one run (bench/gpu/telemetry_rate.cu):
// the criterion is that at N = 16 it stays within 5 % of off. Provider softnic; the caller
// is a host thread with no persistent kernel of its own running.
#pragma once

#include <vector>

#include "dissect/bench/gpu_experiments.h"

namespace dissect::bench {

std::vector<GpuExperimentResult> run_gpu_telemetry_rate(const GpuExperimentConfig& config);

}  // namespace dissect::bench
