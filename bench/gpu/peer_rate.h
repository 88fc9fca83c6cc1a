// gpu-rate --path gdaki|nvshmem-ibgda: Table 5's note, each library's best configuration driven by
// its own device code on the same loopback QPs as mini-gda's rows (bench/gpu/peers/gdaki_rate.cu,
// nvshmem_rate.cu, built only with their headers). rate_run.cu builds the rig, validates the
// payload and reports; these run the library's kernel on it.
//
// The payload is rate_kernel.cuh's `value` payload: message m of QP j writes rate_value(m, j) to
// slot m % RATE_SLOTS of the QP's destination, so rate_run.cu's validation reads the last
// RATE_SLOTS messages of each QP as it does for mini-gda. What m counts differs per library:
//  - GDAKI: doca_gpu_dev_verbs_p reserves its slot inside, after the address and value are given,
//    so m = i * threads_per_qp + k for thread k's i-th put. Slot m % 64 is written only by thread
//    k (threads_per_qp divides 64), in its program order, hence in WQE order.
//  - NVSHMEM: the warp's leader reserves 32 slots first, so m is the WQE index itself.
#pragma once

#include <cstdint>
#include <string>

#include "loopback_qps.h"

namespace dissect::bench::gpu {

struct PeerRateLaunch {
  uint32_t qps, ctas, threads_per_cta;  // the library's configuration (rate_run.cu)
  uint32_t warm_per_thread;             // messages per thread, pass 0 (not timed)
  uint32_t messages_per_thread;         // messages per thread, pass 1 (timed)
  uint32_t signal_period;               // GDAKI: puts per thread between bounded waits
};

struct PeerRateOutcome {
  double ns = 0;         // pass 1: first CTA start to last CTA end (%globaltimer)
  std::string failure;   // empty when every put completed without an error CQE
};

struct PeerLibrary {
  std::string library, version;
};

#if DISSECT_HAVE_GDAKI
// One CTA of threads_per_cta threads sharing QP 0 (q.qps == 1) through doca_gpu_dev_verbs_p.
// Builds DOCA's record, starts the engine (q.start) and runs both passes.
PeerRateOutcome run_gdaki_rate(LoopbackQps& q, const PeerRateLaunch& launch);
PeerLibrary gdaki_rate_library();
#endif
#if DISSECT_HAVE_NVSHMEM_IBGDA
// One CTA per QP, NVSHMEM's internal warp-batched inline put; q's send CQs must be collapsed.
PeerRateOutcome run_nvshmem_rate(LoopbackQps& q, const PeerRateLaunch& launch);
PeerLibrary nvshmem_rate_library();
#endif

}  // namespace dissect::bench::gpu
