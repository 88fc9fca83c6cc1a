// gpu-latency --path nvshmem-ibgda: Table 3's "NVSHMEM internal" rows on the softnic. The timed
// loop of single_operation.cu (one thread, one 8 B put outstanding, issue and put+completion),
// through NVSHMEM's own IBGDA device code (peers/nvshmem_ibgda.cuh: ibgda_reserve_wqe_slots, the
// WQE writer, ibgda_submit_requests, then ibgda_poll_cq as ibgda_quiet calls it) on the pair's
// 256-WQEBB QP, whose send CQ is collapsed as NVSHMEM's are (make_pair, harness.cu).
#include "dissect/peers/nvshmem_ibgda.cuh"

#include "../harness.cuh"
#include "../peer_latency.h"

namespace dissect::bench {
namespace gpu {
namespace {

namespace ibgda = peers::nvshmem_ibgda;

// The kernel's status word (harness.cuh): an error CQE with its syndrome, or NVSHMEM's poll timed
// out (-ETIME).
__device__ inline uint32_t verdict_status(int verdict) {
  if (verdict == 0) return 0;
  if (verdict > 0) return kernel_status(CAUSE_ERROR_CQE, static_cast<uint32_t>(verdict));
  return kernel_status(CAUSE_LIBRARY_TIMEOUT);
}

// NVSHMEM IBGDA's side of time_library_puts (harness.cuh): ibgda::p / ibgda::put on the QP, then
// ibgda::quiet.
struct NvshmemPoster {
  nvshmemi_ibgda_device_qp_t* qp;
  uint32_t lkey, rkey;

  __device__ __forceinline__ uint64_t remote(uint8_t* slot) const {
    return reinterpret_cast<uint64_t>(slot);
  }
  __device__ __forceinline__ uint64_t local(uint8_t* slot) const {
    return reinterpret_cast<uint64_t>(slot);
  }
  __device__ __forceinline__ void put_value(uint64_t remote, uint64_t value) const {
    ibgda::p<uint64_t>(qp, value, remote, ibgda::mkey(rkey));
  }
  __device__ __forceinline__ void put(uint64_t remote, uint64_t local) const {
    ibgda::put(qp, local, ibgda::mkey(lkey), remote, ibgda::mkey(rkey), 8);
  }
  __device__ __forceinline__ uint32_t complete() const { return verdict_status(ibgda::quiet(qp)); }
};

template <bool Inline>
__global__ void nvshmem_put_latency_kernel(nvshmemi_ibgda_device_qp_t* qp, PutPath path,
                                           OpCount ops, SampleBuffers out) {
  NvshmemPoster poster{qp, path.lkey, path.rkey};
  time_library_puts<Inline>(poster, path, ops, out);
}

template <bool Inline>
void measure_nvshmem(const PePairConfig& config, gpu::Measurement& result) {
  measure_peer_put_latency(
      config, "nvshmem-ibgda put latency kernel", result,
      [&](PePair& pair) {
        auto& a = pair.pe[0];
        ibgda::upload_state(a.stream);  // this translation unit's copy of NVSHMEM's state
        return ibgda::Qp(a.qp->handle(), a.device, a.stream);  // a fresh QP: NVSHMEM's counters 0
      },
      [&](const ibgda::Qp& qp, PePair& pair) {
        auto& a = pair.pe[0];
        auto& b = pair.pe[1];
        nvshmem_put_latency_kernel<Inline><<<1, 1, 0, a.stream>>>(
            qp.device_qp(), PutPath{a.src, a.src_mr.lkey, b.dst, b.dst_mr.rkey, 8},
            OpCount{config.warmup, config.iterations}, pair.samples);
        check_cuda(cudaGetLastError(), "launch nvshmem_put_latency_kernel");
      },
      [](uint32_t status) {
        return status_cause(status) == CAUSE_ERROR_CQE ? "error CQE, syndrome " + std::to_string(status_syndrome(status))
                                                       : std::string("NVSHMEM's ibgda_poll_cq timed out (-ETIME)");
      });
}

}  // namespace
}  // namespace gpu

std::vector<gpu::Measurement> run_nvshmem_single_operation(const PePairConfig& config) {
  return gpu::peer_single_operation(
      config, "nvshmem-ibgda", "nvshmem-ibgda-membar", peers::nvshmem_ibgda::LIBRARY,
      peers::nvshmem_ibgda::version(),
      [&](bool is_inline, gpu::Measurement& r) {
        if (is_inline) gpu::measure_nvshmem<true>(config, r);
        else gpu::measure_nvshmem<false>(config, r);
      },
      [](bool is_inline) {
        return std::string(is_inline ? "ibgda_write_rdma_write_inl_wqe (nvshmem_p's WQE)"
                                     : "ibgda_write_rdma_write_wqe, 8 B") +
               " + ibgda_submit_requests (batch 1) + ibgda_poll_cq as ibgda_quiet calls it; "
               "256-WQEBB QP, collapsed send CQ (cc = 1); nic_buf_on_gpumem (GPU-scope membars)";
      });
}

}  // namespace dissect::bench
