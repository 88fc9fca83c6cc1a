// gpu-rate --path gdaki: Table 5's note for GDAKI, one context (QP) shared by 8 threads of one
// CTA, each posting 8 B inline puts with DOCA GPUNetIO's own doca_gpu_dev_verbs_p<uint64_t> as
// NCCL's GIN GDAKI calls it (resource sharing mode GPU: the atomic reserve, the in-order
// mark_wqes_ready, the shared submit; NIC handler from the QP: GPU_SM_DB). Many outstanding: each
// thread waits, bounded (gdaki::wait: DOCA's poll_one_cq_at), for the ticket it took one period
// earlier, every `signal_period` puts, and for its last ticket at the end (the drain). DOCA signals
// every WQE; its reserve reclaims a ring slot through its own (unbounded) poll_cq_at, which the
// lagged waits keep from spinning: they advance cqe_ci well inside the ring.
#include "dissect/peers/gdaki.cuh"

#include "dissect/common/cuda.h"
#include "../peer_rate.h"
#include "../rate_kernel.cuh"

namespace dissect::bench::gpu {
namespace {

namespace gdaki = peers::gdaki;

struct GdakiRateArgs {
  doca_gpu_dev_verbs_qp* qp;
  const LoopbackTarget* targets;  // [0]: the QP's buffers and keys
  uint32_t first;                 // messages each thread posted in earlier launches
  uint32_t messages_per_thread;
  uint32_t period;
  unsigned long long* cta_start;
  unsigned long long* cta_end;
  uint32_t* failure;  // [1 error CQE | 2 timeout, syndrome, ticket]: first failure only
};

__global__ void gdaki_rate_kernel(GdakiRateArgs a) {
  const LoopbackTarget t = a.targets[0];
  const uint32_t k = threadIdx.x, per_qp = blockDim.x;
  const uint32_t rkey = gdaki::mkey(t.rkey);
  __syncthreads();
  if (k == 0) a.cta_start[blockIdx.x] = now_ns();
  doca_gpu_dev_verbs_ticket_t ticket = 0, mark = 0, waited = 0;
  bool marked = false;
  int verdict = gdaki::WAIT_OK;
  for (uint32_t i = 0; i < a.messages_per_thread && verdict == gdaki::WAIT_OK; ++i) {
    const uint64_t m = uint64_t{a.first + i} * per_qp + k;  // peer_rate.h: thread k's slots
    const doca_gpu_dev_verbs_addr raddr{
        reinterpret_cast<uint64_t>(t.dst + (m % RATE_SLOTS) * sizeof(uint64_t)), rkey};
    doca_gpu_dev_verbs_p<uint64_t>(a.qp, raddr, rate_value(m, 0), &ticket);
    if ((i + 1) % a.period == 0) {
      if (marked) verdict = gdaki::wait(a.qp, waited = mark);
      mark = ticket, marked = true;
    }
  }
  if (verdict == gdaki::WAIT_OK && a.messages_per_thread > 0) verdict = gdaki::wait(a.qp, waited = ticket);
  if (verdict != gdaki::WAIT_OK && atomicCAS(&a.failure[0], 0u, verdict == gdaki::WAIT_CQE_ERROR ? 1u : 2u) == 0) {
    a.failure[1] = verdict == gdaki::WAIT_CQE_ERROR ? gdaki::error_syndrome(a.qp, waited) : 0;
    a.failure[2] = static_cast<uint32_t>(waited);
  }
  __syncthreads();
  if (k == 0) a.cta_end[blockIdx.x] = now_ns();
}

}  // namespace

PeerLibrary gdaki_rate_library() { return {gdaki::LIBRARY, gdaki::version()}; }

PeerRateOutcome run_gdaki_rate(LoopbackQps& q, const PeerRateLaunch& l) {
  // DOCA's record of the fresh QP 0, in global memory, before the engine starts (loopback_qps.h).
  const gdaki::Qp qp(q.host_targets()[0].qp, nic::Placement::gpu, q.nic().device(), q.stream());
  GdakiRateArgs a{};
  a.qp = qp.device_qp();
  a.targets = q.targets();
  a.period = l.signal_period;
  a.cta_start = static_cast<unsigned long long*>(q.scratch(8 * l.ctas));
  a.cta_end = static_cast<unsigned long long*>(q.scratch(8 * l.ctas));
  a.failure = static_cast<uint32_t*>(q.scratch(16));
  const void* kernel = reinterpret_cast<const void*>(&gdaki_rate_kernel);
  q.start({kernel}, "gpu-rate gdaki kernel");
  PeerRateOutcome out;
  for (uint32_t pass = 0; pass < 2; ++pass) {  // pass 0 warms up and is not timed
    a.first = pass == 0 ? 0 : l.warm_per_thread;
    a.messages_per_thread = pass == 0 ? l.warm_per_thread : l.messages_per_thread;
    void* args[] = {&a};
    check_cuda(cudaLaunchKernel(kernel, dim3(l.ctas), dim3(l.threads_per_cta), args, 0, q.stream()),
               "launch gdaki_rate_kernel");
    q.wait("gpu-rate gdaki kernel");
    uint32_t failure[3] = {};
    q.read(failure, a.failure, 3);
    if (failure[0] != 0) {
      out.failure = failure[0] == 1
                        ? "error CQE, syndrome " + std::to_string(failure[1]) + " (ticket " +
                              std::to_string(failure[2]) + ")"
                        : "gdaki::wait timed out (ticket " + std::to_string(failure[2]) + ")";
      return out;
    }
  }
  unsigned long long start = 0, end = 0;
  q.read(&start, a.cta_start, 1);
  q.read(&end, a.cta_end, 1);
  out.ns = double(end - start);
  return out;
}

}  // namespace dissect::bench::gpu
