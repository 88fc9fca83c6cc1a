// The `dissect` side of the GPU experiments on the harness's PE pair (gpu-latency, gpu-ordering,
// gpu-inline-sweep, gpu-floor, gpu-gdaki-ablation, gpu-proxy-latency, gpu-telemetry-rate): the
// flags they share, read in one place, and the run that hands their Results to the report. Each
// experiment registers itself in its own file (register_experiment at its bottom):
//   int run_gpu_floor(const Arguments& a, Report& r) { return run_gpu_experiment(a, r, {&run_mechanism_floor}); }
// Flags: --engine gpu-kernel|host-thread, --placement gpu|host, --layout one-gpu|two-gpus,
// --device N, --runs N, --iterations N, --warmup N (>= 100), --quick; --raw keeps every sample and
// --progress prints a line per run (`dissect <name> --help`). Without a CUDA device each prints
// "no CUDA device: skipped" and returns 0 (skip_without_cuda_device, which every GPU experiment
// uses), so `dissect report` still runs on a CPU-only machine.
#pragma once

#include <vector>

#include "dissect/bench/experiment.h"
#include "dissect/bench/gpu_experiments.h"
#include "dissect/bench/results.h"

namespace dissect::bench {

using GpuRunner = std::vector<Result> (*)(const PePairConfig&);

// How one subcommand runs its runner.
struct GpuCommand {
  GpuRunner runner;
  // --path: a peer library's device code (gpu-latency); or always that path (gpu-gdaki-ablation),
  // refused as --path would be.
  bool takes_path = false;
  const char* fixed_path = nullptr;
  bool per_sample = true;  // times each operation (false: whole runs, gpu-telemetry-rate): --raw
  // On the harness's PE pair and its SoftNic(s): the engine, placement, layout and profile
  // flags apply. gpu-proxy-latency has its own rig (a host-engine softnic) and takes none of them.
  bool on_pe_pair = true;
  // --transport rc|dc and --av full|compact (gpu-latency): DC puts beside the RC ones.
  bool takes_transport = false;
};

// True, after printing "no CUDA device: skipped", where this machine has no CUDA device: the
// experiment then returns 0, so that `dissect report` still runs on a CPU-only machine. Every GPU
// experiment asks this once, after check_all_used() and before it allocates anything.
bool skip_without_cuda_device();

// Parses the command's flags into a PePairConfig, runs the runner and adds its Results to
// `report`; 1 when a result's payload did not validate.
int run_gpu_experiment(const Arguments& a, Report& report, const GpuCommand& command);

}  // namespace dissect::bench
