// gpu-latency --path: the peer libraries' own device code (src/peers) in the timed loop of
// single_operation.cu, on the same softnic QP as mini-gda.
#pragma once

#include <string>
#include <vector>

#include "dissect/bench/gpu_experiments.h"

namespace dissect::bench {

// The values --path takes, whether or not this build has their adapters.
std::vector<std::string> latency_paths();
// Throws InvalidArgument naming the path and why when `config` cannot run it: its adapter is not
// built (naming the headers it needs), or the engine, placement or layout is one it cannot use.
void check_latency_path(const GpuExperimentConfig& config);
// Issue and put+completion, inline (8 B) and pointer, through `config.path`'s put and wait.
std::vector<GpuExperimentResult> run_peer_single_operation(const GpuExperimentConfig& config);

// gpu-gdaki-ablation: issue and put+completion of one 8 B inline put for a ladder of paths from
// mini-gda's to DOCA's doca_gpu_dev_verbs_p, one DOCA behaviour added a row (peers/gdaki_ablation.cu).
// Throws InvalidArgument as check_latency_path does for --path gdaki.
std::vector<GpuExperimentResult> run_gdaki_ablation_experiment(const GpuExperimentConfig& config);

// The adapters' runners (bench/gpu/peers/), built with their headers.
std::vector<GpuExperimentResult> run_gdaki_single_operation(const GpuExperimentConfig& config);
std::vector<GpuExperimentResult> run_gdaki_ablation(const GpuExperimentConfig& config);
std::vector<GpuExperimentResult> run_nvshmem_single_operation(const GpuExperimentConfig& config);

}  // namespace dissect::bench
