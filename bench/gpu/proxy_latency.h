// The proxy rows of Table 3 with a GPU producer (bench/gpu/proxy_latency.cu): baseline and tuned
// handoff, plus the 16 B store references measured in the same run. Provider softnic (host-thread
// engine); the caller is a host thread with no persistent kernel of its own running.
#pragma once

#include <vector>

#include "dissect/bench/gpu_experiments.h"

namespace dissect::bench {

std::vector<GpuExperimentResult> run_gpu_proxy_latency(const GpuExperimentConfig& config);

}  // namespace dissect::bench
