// gpu-latency --path gdaki's timed loop (one thread, one 8 B put outstanding, issue and
// put+completion) through DOCA GPUNetIO's doca_gpu_dev_verbs_p / doca_gpu_dev_verbs_put and
// gdaki::wait; gpu-gdaki-ablation's row 6 runs the same kernel (inline). Include after gdaki.cuh.
#pragma once

#include "dissect/peers/gdaki.cuh"

#include "../harness.cuh"

namespace dissect::bench::gpu {

// The kernel's status word (harness.cuh): an error CQE with its syndrome, or the wait timed out.
__device__ inline uint32_t gdaki_verdict_status(doca_gpu_dev_verbs_qp* qp, uint64_t ticket, int verdict) {
  if (verdict == peers::gdaki::WAIT_OK) return 0;
  if (verdict == peers::gdaki::WAIT_CQE_ERROR) {
    return kernel_status(CAUSE_ERROR_CQE, peers::gdaki::error_syndrome(qp, ticket));
  }
  return kernel_status(CAUSE_LIBRARY_TIMEOUT);
}

// DOCA GPUNetIO's side of time_library_puts (harness.cuh): doca_gpu_dev_verbs_p / _put, then
// gdaki::wait for the post's ticket (a fresh one each op, as remote() starts it).
struct GdakiPoster {
  doca_gpu_dev_verbs_qp* qp;
  uint32_t lkey, rkey;
  doca_gpu_dev_verbs_ticket_t ticket = 0;

  __device__ __forceinline__ doca_gpu_dev_verbs_addr remote(uint8_t* slot) {
    ticket = 0;
    return doca_gpu_dev_verbs_addr{reinterpret_cast<uint64_t>(slot), peers::gdaki::mkey(rkey)};
  }
  __device__ __forceinline__ doca_gpu_dev_verbs_addr local(uint8_t* slot) const {
    return doca_gpu_dev_verbs_addr{reinterpret_cast<uint64_t>(slot), peers::gdaki::mkey(lkey)};
  }
  __device__ __forceinline__ void put_value(doca_gpu_dev_verbs_addr remote, uint64_t value) {
    doca_gpu_dev_verbs_p<uint64_t>(qp, remote, value, &ticket);
  }
  __device__ __forceinline__ void put(doca_gpu_dev_verbs_addr remote,
                                      doca_gpu_dev_verbs_addr local) {
    doca_gpu_dev_verbs_put(qp, remote, local, 8, &ticket);
  }
  __device__ __forceinline__ uint32_t complete() {
    return gdaki_verdict_status(qp, ticket, peers::gdaki::wait(qp, ticket));
  }
};

template <bool Inline>
__global__ void gdaki_put_latency_kernel(doca_gpu_dev_verbs_qp* qp, PutPath path, OpCount ops,
                                         SampleBuffers out) {
  GdakiPoster poster{qp, path.lkey, path.rkey};
  time_library_puts<Inline>(poster, path, ops, out);
}

}  // namespace dissect::bench::gpu
