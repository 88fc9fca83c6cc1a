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

template <bool Inline>
__global__ void nvshmem_put_latency_kernel(nvshmemi_ibgda_device_qp_t* qp, uint8_t* src,
                                           uint32_t lkey, uint8_t* dst, uint32_t rkey,
                                           uint32_t warmup, uint32_t iterations,
                                           SampleBuffers out) {
  const uint64_t g0 = now_ns();
  const long long c0 = clock64();
  uint32_t status = 0;
  for (uint32_t i = 0; i < warmup + iterations && status == 0; ++i) {
    const uint64_t raddr = reinterpret_cast<uint64_t>(dst + size_t{i % SLOTS} * SLOT);
    long long ca;
    if constexpr (Inline) {
      const uint64_t value = payload_value(i, 8);
      ca = clock64();
      ibgda::p<uint64_t>(qp, value, raddr, ibgda::mkey(rkey));
    } else {
      uint8_t* s = src + size_t{i % SLOTS} * SLOT;
      for (uint32_t b = 0; b < 8; ++b) s[b] = payload_byte(i, b);
      ca = clock64();
      ibgda::put(qp, reinterpret_cast<uint64_t>(s), ibgda::mkey(lkey), raddr, ibgda::mkey(rkey), 8);
    }
    const long long cb = clock64();
    status = verdict_status(ibgda::quiet(qp));
    const long long cc = clock64();
    record_op(out, i, warmup, ca, cb, cc);
  }
  finish_timing(out, c0, g0, status);
}

template <bool Inline>
void measure_nvshmem(const GpuExperimentConfig& config, gpu::Measurement& result) {
  gpu::TimedMetric issue{"issue", {}, {}, {}}, total{"put+completion", {}, {}, {}};
  const RunTally tally = run_on_fresh_pairs(config, [&](PePair& pair, uint32_t run, RunTally& t) {
    auto& a = pair.pe[0];
    auto& b = pair.pe[1];
    cudaSetDevice(a.device);
    ibgda::upload_state(a.stream);  // this translation unit's copy of NVSHMEM's state
    const ibgda::Qp qp(a.qp->handle(), a.device, a.stream);  // a fresh QP: NVSHMEM's counters 0
    nvshmem_put_latency_kernel<Inline><<<1, 1, 0, a.stream>>>(
        qp.device_qp(), a.src, a.src_mr.lkey, b.dst, b.dst_mr.rkey, config.warmup,
        config.iterations, pair.samples);
    check_cuda(cudaGetLastError(), "launch nvshmem_put_latency_kernel");
    record_latency_run(pair, run, t, config, 8, "nvshmem-ibgda put latency kernel", issue, total, [](uint32_t status) {
      return status_cause(status) == CAUSE_ERROR_CQE ? "error CQE, syndrome " + std::to_string(status_syndrome(status))
                                                     : std::string("NVSHMEM's ibgda_poll_cq timed out (-ETIME)");
    });
  });
  finish_latency_result(tally, issue, total, result);
}

}  // namespace
}  // namespace gpu

std::vector<gpu::Measurement> run_nvshmem_single_operation(const GpuExperimentConfig& config) {
  std::vector<gpu::Measurement> out;
  for (const bool is_inline : {true, false}) {
    const std::string variant = std::string("nvshmem-ibgda, ") + (is_inline ? "inline" : "pointer");
    gpu::Measurement r =
        gpu::base_result(config, "latency", variant, "nvshmem-ibgda-membar", 8, is_inline);
    if (is_inline) gpu::measure_nvshmem<true>(config, r);
    else gpu::measure_nvshmem<false>(config, r);
    r.library = peers::nvshmem_ibgda::LIBRARY;
    r.library_version = peers::nvshmem_ibgda::version();
    r.note += std::string(is_inline ? "ibgda_write_rdma_write_inl_wqe (nvshmem_p's WQE)"
                                    : "ibgda_write_rdma_write_wqe, 8 B") +
              " + ibgda_submit_requests (batch 1) + ibgda_poll_cq as ibgda_quiet calls it; "
              "256-WQEBB QP, collapsed send CQ (cc = 1); nic_buf_on_gpumem (GPU-scope membars)";
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace dissect::bench
