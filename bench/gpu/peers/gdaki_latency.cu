// gpu-latency --path gdaki: Table 3's GDAKI rows on the softnic. The timed loop of
// single_operation.cu (one thread, one 8 B put outstanding, issue and put+completion), through
// DOCA GPUNetIO's own doca_gpu_dev_verbs_p / doca_gpu_dev_verbs_put as NCCL's GIN GDAKI calls them
// (default template arguments: resource sharing GPU, NIC handler from the QP: GPU_SM_DB), and its
// CQ poll bounded by gdaki::wait, on the same softnic QP mini-gda uses.
#include "dissect/peers/gdaki.cuh"

#include "../harness.cuh"
#include "../peer_latency.h"

namespace dissect::bench {
namespace gpu {
namespace {

namespace gdaki = peers::gdaki;

// The kernel's status word (harness.cuh): an error CQE with its syndrome, or the wait timed out.
__device__ inline uint32_t verdict_status(doca_gpu_dev_verbs_qp* qp, uint64_t ticket, int verdict) {
  if (verdict == gdaki::WAIT_OK) return 0;
  if (verdict == gdaki::WAIT_CQE_ERROR) return kernel_status(CAUSE_ERROR_CQE, gdaki::error_syndrome(qp, ticket));
  return kernel_status(CAUSE_LIBRARY_TIMEOUT);
}

template <bool Inline>
__global__ void gdaki_put_latency_kernel(doca_gpu_dev_verbs_qp* qp, uint8_t* src, uint32_t lkey,
                                         uint8_t* dst, uint32_t rkey, uint32_t warmup,
                                         uint32_t iterations, SampleBuffers out) {
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
    status = verdict_status(qp, ticket, gdaki::wait(qp, ticket));
    const long long cc = clock64();
    record_op(out, i, warmup, ca, cb, cc);
  }
  finish_timing(out, c0, g0, status);
}

template <bool Inline>
void measure_gdaki(const GpuExperimentConfig& config, gpu::Measurement& result) {
  gpu::TimedMetric issue{"issue", {}, {}, {}}, total{"put+completion", {}, {}, {}};
  const RunTally tally = run_on_fresh_pairs(config, [&](PePair& pair, uint32_t run, RunTally& t) {
    auto& a = pair.pe[0];
    auto& b = pair.pe[1];
    cudaSetDevice(a.device);
    // A fresh pair's QP is fresh: DOCA's counters start where the softnic's do.
    const gdaki::Qp qp(a.qp->handle(), nic::placement_from_string(config.placement), a.device,
                       a.stream);
    gdaki_put_latency_kernel<Inline><<<1, 1, 0, a.stream>>>(
        qp.device_qp(), a.src, a.src_mr.lkey, b.dst, b.dst_mr.rkey, config.warmup,
        config.iterations, pair.samples);
    check_cuda(cudaGetLastError(), "launch gdaki_put_latency_kernel");
    record_latency_run(pair, run, t, config, 8, "gdaki put latency kernel", issue, total, [](uint32_t status) {
      return status_cause(status) == CAUSE_ERROR_CQE ? "error CQE, syndrome " + std::to_string(status_syndrome(status))
                                                     : std::string("gdaki::wait timed out");
    });
  });
  finish_latency_result(tally, issue, total, result);
}

}  // namespace
}  // namespace gpu

std::vector<gpu::Measurement> run_gdaki_single_operation(const GpuExperimentConfig& config) {
  std::vector<gpu::Measurement> out;
  for (const bool is_inline : {true, false}) {
    const std::string variant = std::string("gdaki, ") + (is_inline ? "inline" : "pointer");
    gpu::Measurement r =
        gpu::base_result(config, "latency", variant, "doca-gpu-sm-db", 8, is_inline);
    if (is_inline) gpu::measure_gdaki<true>(config, r);
    else gpu::measure_gdaki<false>(config, r);
    r.library = peers::gdaki::LIBRARY;
    r.library_version = peers::gdaki::version();
    r.note += std::string(is_inline ? "doca_gpu_dev_verbs_p<uint64_t>" : "doca_gpu_dev_verbs_put, 8 B") +
              " + gdaki::wait (poll_one_cq_at, bounded); sharing GPU, GPU_SM_DB (ring, dbrec, ring)";
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace dissect::bench
