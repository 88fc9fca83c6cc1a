#include "peer_latency.h"

#include "dissect/common/error.h"
#include "gpu_command.h"
#include "to_report.h"

namespace dissect::bench {

std::vector<std::string> latency_paths() { return {"mini-gda", "gdaki", "nvshmem-ibgda"}; }

void check_latency_path(const PePairConfig& c) {
  if (c.path == "mini-gda") return;
#if !DISSECT_HAVE_GDAKI
  if (c.path == "gdaki") {
    throw InvalidArgument("--path gdaki: this build has no GDAKI adapter: NCCL's device headers "
                          "(nccl_device/gin/gdaki/doca_gpunetio, wheel nvidia-nccl-cu13) were not "
                          "found at configure time; run scripts/peer_headers.sh and reconfigure");
  }
#endif
#if !DISSECT_HAVE_NVSHMEM_IBGDA
  if (c.path == "nvshmem-ibgda") {
    throw InvalidArgument("--path nvshmem-ibgda: this build has no NVSHMEM IBGDA adapter: "
                          "non_abi/device/pt-to-pt/ibgda_device.cuh (wheel nvidia-nvshmem-cu13) or "
                          "infiniband/mlx5dv.h were not found at configure time; run "
                          "scripts/peer_headers.sh and reconfigure");
  }
#endif
  // The libraries order their WQE stores before the doorbell with GPU-scope fences only (DOCA's
  // fence.release.gpu, NVSHMEM's __threadfence when nic_buf_on_gpumem): enough for the GPU engine
  // on GPU-resident queues on the submitter's GPU, not for a host-thread engine or host queues.
  if (c.engine != "gpu-kernel" || c.placement != "gpu" || c.pe_layout != "one-gpu") {
    throw InvalidArgument("--path " + c.path + ": runs with --engine gpu-kernel --placement gpu "
                          "--layout one-gpu only (the library orders its WQEs with GPU-scope "
                          "fences), not --engine " + c.engine + " --placement " + c.placement +
                          " --layout " + c.pe_layout);
  }
}

std::vector<gpu::Measurement> run_peer_single_operation(const PePairConfig& c) {
  check_latency_path(c);
  c.progress.plan(2 * size_t{c.runs});  // each library: inline and pointer, put+completion
#if DISSECT_HAVE_GDAKI
  if (c.path == "gdaki") return run_gdaki_single_operation(c);
#endif
#if DISSECT_HAVE_NVSHMEM_IBGDA
  if (c.path == "nvshmem-ibgda") return run_nvshmem_single_operation(c);
#endif
  throw InvalidArgument("--path " + c.path + ": not a peer path");
}

namespace {

// gpu-gdaki-ablation: issue and put+completion of one 8 B inline put for a ladder of paths from
// mini-gda's to DOCA's doca_gpu_dev_verbs_p, one DOCA behaviour added a row (peers/gdaki_ablation.cu).
// Throws InvalidArgument as check_latency_path does for --path gdaki.
std::vector<Result> run_gdaki_ablation_experiment(const PePairConfig& c) {
  PePairConfig gdaki = c;
  gdaki.path = "gdaki";
  check_latency_path(gdaki);
#if DISSECT_HAVE_GDAKI
  return to_results(run_gdaki_ablation(gdaki), gdaki);
#else
  throw InvalidArgument("gpu-gdaki-ablation: no GDAKI adapter in this build");
#endif
}

int run_gpu_gdaki_ablation(const Arguments& a, Report& r) {
  return run_gpu_experiment(a, r, {&run_gdaki_ablation_experiment, false, /*fixed_path=*/"gdaki"});
}

const bool registered = register_experiment(
    {"gpu-gdaki-ablation", "one GPU thread, one 8 B inline put: mini-gda to DOCA GPUNetIO's doca_gpu_dev_verbs_p, one DOCA behaviour a row (Table 3's gap)",
     run_gpu_gdaki_ablation, true});

}  // namespace

}  // namespace dissect::bench
