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

template <bool Inline>
__global__ void gdaki_put_latency_kernel(doca_gpu_dev_verbs_qp* qp, PutPath path, OpCount ops,
                                         SampleBuffers out) {
  namespace gdaki = peers::gdaki;
  uint8_t* const src = path.src;
  uint8_t* const dst = path.dst;
  const uint32_t lkey = path.lkey, rkey = path.rkey;
  const uint32_t warmup = ops.warmup, iterations = ops.iterations;
  const uint64_t g0 = now_ns();
  const long long c0 = clock64();
  uint32_t status = 0;
  for (uint32_t i = 0; i < warmup + iterations && status == 0; ++i) {
    const doca_gpu_dev_verbs_addr raddr{reinterpret_cast<uint64_t>(dst + size_t{i % SLOTS} * SLOT),
                                        gdaki::mkey(rkey)};
    doca_gpu_dev_verbs_ticket_t ticket = 0;
    long long ca;
    if constexpr (Inline) {
      const uint64_t value = payload_value(i, 8);
      ca = clock64();
      doca_gpu_dev_verbs_p<uint64_t>(qp, raddr, value, &ticket);
    } else {
      uint8_t* s = src + size_t{i % SLOTS} * SLOT;
      for (uint32_t b = 0; b < 8; ++b) s[b] = payload_byte(i, b);
      const doca_gpu_dev_verbs_addr laddr{reinterpret_cast<uint64_t>(s), gdaki::mkey(lkey)};
      ca = clock64();
      doca_gpu_dev_verbs_put(qp, raddr, laddr, 8, &ticket);
    }
    const long long cb = clock64();
    status = gdaki_verdict_status(qp, ticket, gdaki::wait(qp, ticket));
    const long long cc = clock64();
    record_op(out, i, warmup, ca, cb, cc);
  }
  finish_timing(out, c0, g0, status);
}

}  // namespace dissect::bench::gpu
