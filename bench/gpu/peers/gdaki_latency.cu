// gpu-latency --path gdaki: Table 3's GDAKI rows on the softnic. The timed loop of
// single_operation.cu (one thread, one 8 B put outstanding, issue and put+completion), through
// DOCA GPUNetIO's own doca_gpu_dev_verbs_p / doca_gpu_dev_verbs_put as NCCL's GIN GDAKI calls them
// (default template arguments: resource sharing GPU, NIC handler from the QP: GPU_SM_DB), and its
// CQ poll bounded by gdaki::wait, on the same softnic QP mini-gda uses.
#include "dissect/peers/gdaki.cuh"

#include "../harness.cuh"
#include "gdaki_put_kernel.cuh"
#include "../peer_latency.h"

namespace dissect::bench {
namespace gpu {
namespace {

namespace gdaki = peers::gdaki;

template <bool Inline>
void measure_gdaki(const PePairConfig& config, gpu::Measurement& result) {
  measure_peer_put_latency(
      config, "gdaki put latency kernel", result,
      [&](PePair& pair) {  // a fresh pair's QP is fresh: DOCA's counters start where the softnic's do
        auto& a = pair.pe[0];
        return gdaki::Qp(a.qp->handle(), nic::placement_from_string(config.placement), a.device, a.stream);
      },
      [&](const gdaki::Qp& qp, PePair& pair) {
        auto& a = pair.pe[0];
        auto& b = pair.pe[1];
        gdaki_put_latency_kernel<Inline><<<1, 1, 0, a.stream>>>(
            qp.device_qp(), PutPath{a.src, a.src_mr.lkey, b.dst, b.dst_mr.rkey, 8},
            OpCount{config.warmup, config.iterations}, pair.samples);
        check_cuda(cudaGetLastError(), "launch gdaki_put_latency_kernel");
      },
      [](uint32_t status) {
        return status_cause(status) == CAUSE_ERROR_CQE ? "error CQE, syndrome " + std::to_string(status_syndrome(status))
                                                       : std::string("gdaki::wait timed out");
      });
}

}  // namespace
}  // namespace gpu

std::vector<gpu::Measurement> run_gdaki_single_operation(const PePairConfig& config) {
  return gpu::peer_single_operation(
      config, "gdaki", "doca-gpu-sm-db", peers::gdaki::LIBRARY, peers::gdaki::version(),
      [&](bool is_inline, gpu::Measurement& r) {
        if (is_inline) gpu::measure_gdaki<true>(config, r);
        else gpu::measure_gdaki<false>(config, r);
      },
      [](bool is_inline) {
        return std::string(is_inline ? "doca_gpu_dev_verbs_p<uint64_t>" : "doca_gpu_dev_verbs_put, 8 B") +
               " + gdaki::wait (poll_one_cq_at, bounded); sharing GPU, GPU_SM_DB (ring, dbrec, ring)";
      });
}

}  // namespace dissect::bench
