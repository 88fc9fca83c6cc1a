// GDAKI on the softnic: NCCL's GIN GDAKI device path is DOCA GPUNetIO's device verbs, bundled in
// the nvidia-nccl-cu13 wheel (nccl_device/gin/gdaki/doca_gpunetio). Their QP record,
// `struct doca_gpu_dev_verbs_qp`, is a plain record of SQ ring, doorbell record, doorbell register
// and send CQ: make_qp fills it from a softnic nic::QpHandle, so an unmodified
// doca_gpu_dev_verbs_put / _p posts real mlx5 WQEs into the softnic QP and the softnic engine
// completes them. Nothing of DOCA is copied here; its headers are a dependency.
//
// What DOCA assumes of the QP, and the softnic gives (checked by make_qp where it can be):
//  - one CQE per WQE, each WQE one WQEBB: its wait polls CQE `ticket` for WQE `ticket`. Every
//    put/p DOCA builds is signalled (CQ_UPDATE) and fits one WQEBB (an 8 B _p: 3 DS; a put: 3 DS).
//    Mixing mini-gda posts (unsignalled or multi-WQEBB) into the same QP breaks that pairing.
//  - the QP is fresh: DOCA's counters start at 0, as the softnic's WQE and CQE indexes do.
//  - doorbells go to the register with the GPU_SM_DB handler (ring, dbrec, ring): the softnic
//    engine reads the register, and a repeated value is one doorbell. BlueFlame (GPU_SM_BF) would
//    copy the whole WQE into the register: the softnic's register is one 8-byte word.
//  - keys are stored as given (DOCA_GPUNETIO_VERBS_MKEY_SWAPPED == 1): pass mkey(key).
//
// <cuda.h> comes first: DOCA picks the doorbell store by CUDA_VERSION (>= 12020:
// st.mmio.relaxed.sys), and without it the doorbell silently becomes a plain store.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cerrno>
#include <cstdint>
#include <string>

#include "nccl.h"  // NCCL_MAJOR / NCCL_MINOR / NCCL_PATCH: the version these headers belong to
#include "nccl_device/gin/gdaki/doca_gpunetio/doca_gpunetio_device.h"

#include "dissect/common/clock.h"
#include "dissect/common/wait.h"
#include "dissect/nic/handles.h"
#include "dissect/nic/nic.h"
#include "dissect/peers/device_record.h"

#if !defined(CUDA_VERSION) || CUDA_VERSION < 12020
#error "DOCA GPUNetIO rings with st.mmio only from CUDA 12.2 (CUDA_VERSION from <cuda.h>)"
#endif

namespace dissect::peers::gdaki {

inline constexpr const char* LIBRARY = "NCCL GDAKI (bundled DOCA GPUNetIO device verbs)";
inline std::string version() {
  return std::to_string(NCCL_MAJOR) + "." + std::to_string(NCCL_MINOR) + "." +
         std::to_string(NCCL_PATCH);
}

// A memory key as DOCA's WQE builders take it: already in the WQE's byte order.
__host__ __device__ constexpr uint32_t mkey(uint32_t key) {
#if DOCA_GPUNETIO_VERBS_MKEY_SWAPPED == 1
  return ((key & 0xffu) << 24) | ((key & 0xff00u) << 8) | ((key >> 8) & 0xff00u) | (key >> 24);
#else
  return key;
#endif
}

// DOCA's record of the fresh softnic QP `qp`, whose queues are in `placement`. Throws
// InvalidArgument naming the field when the QP cannot be expressed (an SQ deeper than DOCA's
// 16-bit sq_wqe_num, a CQ shallower than the SQ).
doca_gpu_dev_verbs_qp make_qp(const nic::QpHandle& qp, nic::Placement placement);

// make_qp's record in GPU global memory on `device` (DOCA's device code reads it with __ldg).
class Qp {
 public:
  Qp(const nic::QpHandle& qp, nic::Placement placement, int device, cudaStream_t stream);
  doca_gpu_dev_verbs_qp* device_qp() const { return static_cast<doca_gpu_dev_verbs_qp*>(home_.get()); }
  doca_gpu_dev_verbs_qp read_back(cudaStream_t stream) const;  // DOCA's counters, for checks

 private:
  DeviceRecord home_;
};

// ---- device side -------------------------------------------------------------------------------

// What a bounded wait saw.
enum WaitVerdict : int { WAIT_OK = 0, WAIT_CQE_ERROR = -EIO, WAIT_TIMEOUT = -ETIMEDOUT };

// doca_gpu_dev_verbs_wait polls without a bound and drops the error: this waits for CQE `ticket`
// through DOCA's own doca_gpu_dev_verbs_poll_one_cq_at (the same CQE read, acquire fence and
// cqe_ci update as its wait), bounded by `timeout_ns` (common/wait.h's one bound, checked with
// over(): the wait is inside gpu-latency's timed put+completion, so it spins bare as DOCA's does),
// and returns the verdict: WAIT_OK, WAIT_CQE_ERROR (an error CQE; error_syndrome() reads it) or
// WAIT_TIMEOUT (after a line naming the QP and the ticket; no trap, the caller reports it).
template <doca_gpu_dev_verbs_resource_sharing_mode Sharing = DOCA_GPUNETIO_VERBS_RESOURCE_SHARING_MODE_GPU>
__device__ inline int wait(doca_gpu_dev_verbs_qp* qp, doca_gpu_dev_verbs_ticket_t ticket,
                           uint64_t timeout_ns = DEFAULT_WAIT_TIMEOUT_NS) {
  BoundedWait bound(timeout_ns);
  for (;;) {
    const int status = doca_gpu_dev_verbs_poll_one_cq_at<Sharing>(&qp->cq_sq, ticket);
    if (status == 0) return WAIT_OK;
    if (status != EBUSY) return WAIT_CQE_ERROR;
    if (bound.over()) {
      printf("gdaki::wait: QP 0x%x: no CQE for ticket %llu in %llu ns\n", qp->sq_num,
             static_cast<unsigned long long>(ticket), static_cast<unsigned long long>(timeout_ns));
      return WAIT_TIMEOUT;
    }
  }
}

// The syndrome of the error CQE for `ticket` (valid after wait returned WAIT_CQE_ERROR).
__device__ inline uint8_t error_syndrome(const doca_gpu_dev_verbs_qp* qp,
                                         doca_gpu_dev_verbs_ticket_t ticket) {
  const auto* cqes = reinterpret_cast<const doca_gpunetio_ib_mlx5_err_cqe_ex*>(qp->cq_sq.cqe_daddr);
  return cqes[ticket & (qp->cq_sq.cqe_num - 1)].syndrome;
}

}  // namespace dissect::peers::gdaki
