// The caller kernels of gpu-kernel-cost (§4.3.2): every thread keeps LIVE values across the
// communication call site and does the same useful work in every variant; thread 0 of a block
// submits the block's messages, spread through its steps, on the block's own QP (mini-gda, one
// QP per block), and waits for each when asked. The other warps compute throughout.
//
// mini-proxy (Path::mini_proxy): the same, through a descriptor into the block's ring.
//
// Included by kernel_cost.cu (no communication code; the send inlined) and by
// kernel_cost/separate_kernels.cu (compiled with -rdc: the send is a real call into
// kernel_cost/separate_send.cu, so the caller's live values must survive it).
#pragma once

#include <type_traits>

#include "dissect/common/clock.h"
#include "dissect/gda/gda.h"
#include "dissect/proxy/handoff.h"
#include "kernel_cost.h"

namespace dissect::bench::gpu {

// GPU scope: the softnic's engine kernel reads GPU-resident queues and doorbells (rate_kernel.cuh).
using KernelCostPolicy = gda::ordering::gpu_fence;

// One message: an 8 B inline write from a register, or a pointer write of `bytes` from the QP's
// source buffer; every message signalled, so that a wait (and the final drain) has its CQE.
__device__ __forceinline__ uint32_t send_message_body(const LoopbackTarget& t, uint32_t block,
                                                      uint32_t message, uint32_t bytes,
                                                      uint32_t wait) {
  uint64_t end = 0;
  const uint64_t remote = reinterpret_cast<uint64_t>(t.dst);
  gda::Status s;
  if (bytes <= 8) {
    s = gda::put_value<KernelCostPolicy>(t.qp, kernel_cost_value(block, message), bytes, remote,
                                         t.rkey, gda::Completion::signaled, &end);
  } else {
    const gda::WriteRequest r{reinterpret_cast<uint64_t>(t.src), t.lkey, bytes, remote, t.rkey};
    s = gda::put<KernelCostPolicy>(t.qp, r, gda::Completion::signaled, &end);
  }
  if (s == gda::Status::ok && wait) {
    s = gda::wait_completion<KernelCostPolicy, gda::Sharing::exclusive>(t.qp, end);
  }
  return static_cast<uint32_t>(s);
}

// mini-proxy: one write descriptor of `bytes` from block's source slot to its destination slot,
// on a ring other blocks share (tuned handoff, shared producers); the payload was written before
// the kernel, so no payload fence precedes the descriptor. The index + 1 is kept for the drain.
// Proxy statuses are returned above 0xff so that the failure word tells the paths apart.
__device__ __forceinline__ uint32_t send_proxy_body(const proxy::RingHandle& ring,
                                                    unsigned long long* last_index, uint32_t block,
                                                    uint32_t slot_bytes, uint32_t bytes,
                                                    uint32_t wait) {
  const uint32_t at = block * slot_bytes;
  const proxy::Request r{proxy::Operation::write, 0, bytes, at, at};
  uint64_t index = 0;
  proxy::Status s = proxy::enqueue<proxy::tuned, proxy::Sharing::shared>(ring, r, &index);
  if (s == proxy::Status::ok) *last_index = index + 1;
  if (s == proxy::Status::ok && wait) s = proxy::wait_completion(ring, index);
  return s == proxy::Status::ok ? 0 : 0x100 | static_cast<uint32_t>(s);
}

// The separately compiled sends (kernel_cost/separate_send.cu; -rdc only).
__device__ uint32_t send_message_separate(const LoopbackTarget& t, uint32_t block,
                                          uint32_t message, uint32_t bytes, uint32_t wait);
__device__ uint32_t send_proxy_separate(const proxy::RingHandle& ring,
                                        unsigned long long* last_index, uint32_t block,
                                        uint32_t slot_bytes, uint32_t bytes, uint32_t wait);

// Block `block`'s message `message` on path P, through build B.
template <Build B, Path P>
__device__ __forceinline__ uint32_t send_message(const KernelCostArgs& a, uint32_t block,
                                                 uint32_t message) {
  if constexpr (P == Path::mini_proxy) {
    const proxy::RingHandle& ring = a.rings[block % a.ring_count];
    unsigned long long* last = a.last_index + block;
    if constexpr (B == Build::separate) {
      return send_proxy_separate(ring, last, block, a.slot_bytes, a.bytes, a.wait);
    } else {
      return send_proxy_body(ring, last, block, a.slot_bytes, a.bytes, a.wait);
    }
  } else if constexpr (B == Build::separate) {
    return send_message_separate(a.targets[block], block, message, a.bytes, a.wait);
  } else {
    return send_message_body(a.targets[block], block, message, a.bytes, a.wait);
  }
}

// One step of useful work on the live values.
template <Caller C, uint32_t LIVE>
__device__ __forceinline__ void work_step(float (&v)[LIVE], const KernelCostArgs& a,
                                          uint32_t step, uint32_t thread, uint32_t threads) {
  if constexpr (C == Caller::compute) {
#pragma unroll
    for (uint32_t r = 0; r < KERNEL_COST_ROUNDS; ++r) {
#pragma unroll
      for (uint32_t j = 0; j < LIVE; ++j) v[j] = fmaf(v[j], 0.999f, 0.001f);
    }
  } else {
#pragma unroll
    for (uint32_t j = 0; j < LIVE; ++j) {
      const uint32_t row = (step * LIVE + j) & (a.stream_rows - 1);
      v[j] = fmaf(__ldcs(a.stream + size_t{row} * threads + thread), 0.5f, v[j]);
    }
  }
}

// Useful work per thread and step: FMAs (compute) or bytes loaded (stream).
template <Caller C, uint32_t LIVE>
DISSECT_HD constexpr double work_per_step() {
  return C == Caller::compute ? double{KERNEL_COST_ROUNDS} * LIVE : 4.0 * LIVE;
}

__device__ inline void kernel_cost_failure(const KernelCostArgs& a, uint32_t status) {
  if (atomicCAS(&a.failure[0], 0u, status) == 0) a.failure[1] = blockIdx.x;
}

template <Caller C, uint32_t LIVE, Build B, Path P = Path::mini_gda>
__global__ void __launch_bounds__(KERNEL_COST_THREADS) kernel_cost(KernelCostArgs a) {
  const uint32_t threads = gridDim.x * blockDim.x;
  const uint32_t thread = blockIdx.x * blockDim.x + threadIdx.x;
  const uint64_t g0 = now_ns();
  const long long c0 = clock64();
  if (threadIdx.x == 0) a.block_start[blockIdx.x] = g0;
  float v[LIVE];
#pragma unroll
  for (uint32_t j = 0; j < LIVE; ++j) v[j] = float(thread % 1024) * 1e-3f + float(j);
  // Message m is sent before step (m + 1) * every; with no messages the call is never made, yet
  // compiled in (its condition is a kernel argument): "code only". The work between two sends is
  // a loop of its own, as a kernel that computes and then communicates is written, so every
  // variant runs the same unrollable work loop and what differs is the communication code and the
  // registers it needs. (A send check inside every step cost even mini-proxy's one-store enqueue
  // 20 % of the compute caller's throughput on the H200: the step loop was no longer unrolled.)
  const uint32_t every = a.steps / (a.messages + 1);
  uint32_t next = a.messages ? every : a.steps, sent = 0;
  for (uint32_t step = 0; step < a.steps;) {
    const uint32_t until = next < a.steps ? next : a.steps;
    for (; step < until; ++step) work_step<C, LIVE>(v, a, step, thread, threads);
    if constexpr (B != Build::none) {
      if (step == next && step < a.steps) {
        if (threadIdx.x == 0) {
          const uint32_t s = send_message<B, P>(a, blockIdx.x, sent);
          if (s != 0) {  // the block sends no more: later messages would fail the same way
            kernel_cost_failure(a, s);
            sent = a.messages;
          }
        }
        ++sent;
        next = sent < a.messages ? next + every : a.steps;
      }
    }
    if (step == next) next = a.steps;  // Build::none: no sends, one stretch of work
  }
  float sum = 0;
#pragma unroll
  for (uint32_t j = 0; j < LIVE; ++j) sum += v[j];
  a.out[thread] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    a.block_end[blockIdx.x] = now_ns();
    if (blockIdx.x == 0) {
      a.clock[0] = static_cast<unsigned long long>(clock64() - c0);
      a.clock[1] = now_ns() - g0;
    }
  }
}

}  // namespace dissect::bench::gpu
