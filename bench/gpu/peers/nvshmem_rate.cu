// gpu-rate --path nvshmem-ibgda: Table 5's note for NVSHMEM, 16 RC QPs x 256 threads per CTA, one
// QP per CTA (NVSHMEM's CTA-mapped RCs: is_qp_shared_among_ctas false, so its _block atomics),
// 8 B inline puts through NVSHMEM's own internal IBGDA steps, batched across the warp as
// nvshmemi_ibgda_rma_p_impl does for a full warp that cannot combine data: lane 0 reserves 32 WQE
// slots (ibgda_reserve_wqe_slots, which reclaims through ibgda_poll_cq, bounded by NVSHMEM's own
// poll timeout), each lane writes its inline WQE (ibgda_write_rdma_write_inl_wqe), the last lane's
// WQE alone asks for a CQE, and the last lane submits the 32 (ibgda_submit_requests: in-order
// ready_head, dbrec, doorbell). The drain is NVSHMEM's per-QP quiet (nvshmem_ibgda::quiet, i.e.
// ibgda_poll_cq up to ready_head, as ibgda_quiet runs it) by one thread of each CTA. The send CQs
// are collapsed, as NVSHMEM creates them. (The public nvshmem_p would first look up the QP, key
// and remote address in the symmetric heap's tables, which the softnic does not have:
// peers/nvshmem_ibgda.cuh.) This unit's NVSHMEM state is uploaded here, beside its kernel.
#include "dissect/peers/nvshmem_ibgda.cuh"

#include <algorithm>
#include <vector>

#include "dissect/common/cuda.h"
#include "../peer_rate.h"
#include "../rate_kernel.cuh"

namespace dissect::bench::gpu {
namespace {

namespace ibgda = peers::nvshmem_ibgda;

constexpr uint32_t WARP = 32;

struct NvshmemRateArgs {
  nvshmemi_ibgda_device_qp_t* const* qps;  // one per CTA
  const LoopbackTarget* targets;
  uint32_t posts;  // warp posts of 32 puts: messages per thread
  unsigned long long* cta_start;
  unsigned long long* cta_end;
  uint32_t* failure;  // [1 error CQE | 2 timeout, syndrome or errno, QP]: first failure only
};

__global__ void nvshmem_rate_kernel(NvshmemRateArgs a) {
#ifdef __CUDA_ARCH__
  const uint32_t j = blockIdx.x, lane = threadIdx.x % WARP;
  nvshmemi_ibgda_device_qp_t* qp = a.qps[j];
  const LoopbackTarget t = a.targets[j];
  const __be32 rkey = ibgda::mkey(t.rkey);
  __syncthreads();
  if (threadIdx.x == 0) a.cta_start[j] = now_ns();
  for (uint32_t p = 0; p < a.posts; ++p) {
    uint64_t base = 0;
    if (lane == 0) base = ibgda_reserve_wqe_slots(qp, WARP, false);
    base = __shfl_sync(0xffffffffu, base, 0);
    const uint64_t m = base + lane;  // peer_rate.h: the message is the WQE index
    const uint64_t value = rate_value(m, j);
    const uint64_t raddr = reinterpret_cast<uint64_t>(t.dst + (m % RATE_SLOTS) * sizeof(uint64_t));
    void* wqes[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) wqes[i] = ibgda_get_wqe_ptr(qp, static_cast<uint16_t>(m + i));
    ibgda_write_rdma_write_inl_wqe<false>(qp, nullptr, &value, raddr, rkey, sizeof value,
                                          static_cast<uint16_t>(m),
                                          lane == WARP - 1 ? MLX5_WQE_CTRL_CQ_UPDATE : 0, wqes);
    __syncwarp();
    if (lane == WARP - 1) ibgda_submit_requests<false>(qp, base, WARP);
    __syncwarp();
  }
  __syncthreads();  // every warp of this QP has submitted
  if (threadIdx.x == 0) {
    const int verdict = ibgda::quiet(qp);
    if (verdict != 0 && atomicCAS(&a.failure[0], 0u, verdict > 0 ? 1u : 2u) == 0) {
      a.failure[1] = static_cast<uint32_t>(verdict > 0 ? verdict : -verdict);
      a.failure[2] = j;
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) a.cta_end[j] = now_ns();
#endif
}

}  // namespace

PeerLibrary nvshmem_rate_library() {
  return {ibgda::LIBRARY, ibgda::version()};
}

PeerRateOutcome run_nvshmem_rate(LoopbackQps& q, const PeerRateLaunch& l) {
  // Everything before the engine starts (loopback_qps.h): this unit's NVSHMEM state, then each
  // fresh QP's records (CQE 0 preset as NVSHMEM fills its CQs).
  ibgda::upload_state(q.stream());
  std::vector<ibgda::Qp> records;
  records.reserve(l.qps);
  std::vector<nvshmemi_ibgda_device_qp_t*> pointers;
  for (uint32_t j = 0; j < l.qps; ++j) {
    records.emplace_back(q.host_targets()[j].qp, q.nic().device(), q.stream());
    pointers.push_back(records.back().device_qp());
  }
  NvshmemRateArgs a{};
  auto* qps = static_cast<nvshmemi_ibgda_device_qp_t**>(q.scratch(sizeof(void*) * l.qps));
  q.write_bytes(qps, pointers.data(), sizeof(void*) * l.qps);
  a.qps = qps;
  a.targets = q.targets();
  a.cta_start = static_cast<unsigned long long*>(q.scratch(8 * l.ctas));
  a.cta_end = static_cast<unsigned long long*>(q.scratch(8 * l.ctas));
  a.failure = static_cast<uint32_t*>(q.scratch(16));
  const void* kernel = reinterpret_cast<const void*>(&nvshmem_rate_kernel);
  q.start({kernel}, "gpu-rate nvshmem-ibgda kernel");
  PeerRateOutcome out;
  for (uint32_t pass = 0; pass < 2; ++pass) {  // pass 0 warms up and is not timed
    a.posts = pass == 0 ? l.warm_per_thread : l.messages_per_thread;
    void* args[] = {&a};
    check_cuda(cudaLaunchKernel(kernel, dim3(l.ctas), dim3(l.threads_per_cta), args, 0, q.stream()),
               "launch nvshmem_rate_kernel");
    q.wait("gpu-rate nvshmem-ibgda kernel");
    uint32_t failure[3] = {};
    q.read(failure, a.failure, 3);
    if (failure[0] != 0) {
      out.failure = "QP " + std::to_string(failure[2]) +
                    (failure[0] == 1 ? ": error CQE, syndrome " + std::to_string(failure[1])
                                     : ": NVSHMEM's ibgda_poll_cq timed out (errno " +
                                           std::to_string(failure[1]) + ")");
      return out;
    }
  }
  std::vector<unsigned long long> start(l.ctas), end(l.ctas);
  q.read(start.data(), a.cta_start, l.ctas);
  q.read(end.data(), a.cta_end, l.ctas);
  unsigned long long first = start[0], last = end[0];
  for (uint32_t c = 0; c < l.ctas; ++c) first = std::min(first, start[c]), last = std::max(last, end[c]);
  out.ns = double(last - first);
  return out;
}

}  // namespace dissect::bench::gpu
