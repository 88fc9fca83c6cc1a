// gpu-latency --path: the peer libraries' own device code (src/peers) in the timed loop of
// single_operation.cu, on the same softnic QP as mini-gda.
#pragma once

#include <string>
#include <vector>

#include "dissect/bench/gpu_experiments.h"
#include "measurement.h"

namespace dissect::bench {

// The values --path takes, whether or not this build has their adapters.
std::vector<std::string> latency_paths();
// Throws InvalidArgument naming the path and why when `config` cannot run it: its adapter is not
// built (naming the headers it needs), or the engine, placement or layout is one it cannot use.
void check_latency_path(const PePairConfig& config);
// Issue and put+completion, inline (8 B) and pointer, through `config.path`'s put and wait.
std::vector<gpu::Measurement> run_peer_single_operation(const PePairConfig& config);

// The adapters' runners (bench/gpu/peers/), built with their headers.
std::vector<gpu::Measurement> run_gdaki_single_operation(const PePairConfig& config);
std::vector<gpu::Measurement> run_gdaki_ablation(const PePairConfig& config);
std::vector<gpu::Measurement> run_nvshmem_single_operation(const PePairConfig& config);

}  // namespace dissect::bench
