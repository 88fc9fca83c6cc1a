// The parallel GPU engine: a persistent kernel of `ctas` CTAs of `warps_per_cta` warps. Warp w of
// W serves QPs w, w + W, w + 2W, ... of one NIC, executing windows of up to 32 WQEs (window.h) with
// one WQE per lane. Host-side launch API (gpu_runner.cu calls it; the kernel is in gpu_kernel.cu).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "dissect/softnic/impl/context.h"

namespace dissect::softnic {

struct EngineLaunch {
  NicTables* tables;                // in the engine's GPU memory
  const uint32_t* stop;             // GPU memory; the host sets it through a copy
  EngineStatus* status;             // mapped host memory
  unsigned long long* counts;       // GPU memory: [0] WQEs executed, [1] warps exited
  uint32_t generation;
  uint32_t warps;                   // in the grid
  uint32_t until_idle;              // 1: return after a pass over every QP finds no work (drain)
  uint32_t doorbell_dates;          // 1: read the pass clock (SoftNicOptions::doorbell_dates)
};


// `paced`: the NIC's timing profile is enabled (the kernel built for it: gpu_kernel.cu).
cudaError_t launch_engine_kernel(const EngineLaunch& launch, uint32_t ctas, uint32_t warps_per_cta,
                                 bool paced, cudaStream_t stream);
// Sets up, while no engine runs, the per-context resources a user kernel may need on its first
// launch (local memory, the printf FIFO): see gpu_engine.h, HAZARDS.
cudaError_t launch_resource_probe(uint32_t index, cudaStream_t stream);
const void* engine_kernel_function(bool paced);
// With -DDISSECT_ENGINE_PHASES: prints the engine's per-phase cycle sums (lanes.h); else nothing.
void print_engine_phases(cudaStream_t stream);

}  // namespace dissect::softnic
