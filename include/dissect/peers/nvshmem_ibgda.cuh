// NVSHMEM IBGDA on the softnic: NVSHMEM's own IBGDA device code (nvidia-nvshmem-cu13,
// non_abi/device/pt-to-pt/ibgda_device.cuh) posting into a softnic QP, at the level of its
// internal path (the paper's "NVSHMEM internal" row): ibgda_reserve_wqe_slots,
// ibgda_write_rdma_write_wqe / _inl_wqe, ibgda_submit_requests (post_send: dbrec, doorbell) and
// ibgda_poll_cq as ibgda_quiet calls it. Nothing of NVSHMEM is copied; its headers are a dependency.
//
// What this fills, and what NVSHMEM needs that the softnic does not give:
//  - nvshmemi_ibgda_device_qp_t + its nvshmemi_ibgda_device_cq_t (management counters inside),
//    from a nic::QpHandle: make_records. They live in global memory (DeviceRecord).
//  - nvshmemi_ibgda_device_state_d, NVSHMEM's __constant__ state: without -rdc its header declares
//    it nowhere, so this header defines it, static, in each translation unit that includes it;
//    upload_state() fills that unit's copy (num_requests_in_batch 1: every request posts,
//    nic_buf_on_gpumem: GPU-scope membars, no async post-send). Kernels must be in the same unit.
//  - A COLLAPSED CQ: ibgda_poll_cq reads every CQE from entry 0 (cq->cqe, never indexed) and
//    compares its wqe_counter; NVSHMEM creates its CQs collapsed (mlx5 CQ context cc = 1, oi = 1)
//    and fills them with 0xff. The softnic gives the same: QpAttributes::send_cq_collapsed
//    (attributes() below; src/softnic/engine/execute.h write_cqe_at), so the QP has a normal-depth ring and
//    as many WQEs outstanding as it holds (ibgda_reserve_wqe_slots waits for a slot through the
//    same poll). Entry 0's wqe_counter is preset to 0xffff (NVSHMEM's fill) by Qp.
//  - The public API (nvshmem_putmem_nbi, nvshmem_quiet) also needs nvshmemi_device_state_d (npes,
//    mype, the symmetric heap's base, size and peers' remote bases, the rail map) and the key
//    tables by heap chunk: the symmetric heap bootstrap of the host library, not a QP. Not driven.
//  - Keys are stored as given (__be32): pass mkey(key).
//  - Every poll is bounded: NVSHMEM_TIMEOUT_DEVICE_POLLING (its own 4 s IBGDA_POLL_TIMEOUT,
//    reported as -ETIME) is defined before the header; without it ibgda_poll_cq spins forever.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cerrno>
#include <cstdint>
#include <stdexcept>
#include <string>

#ifndef NVSHMEM_TIMEOUT_DEVICE_POLLING
#define NVSHMEM_TIMEOUT_DEVICE_POLLING 1
#endif
#include "non_abi/nvshmem_build_options.h"
#include "non_abi/nvshmem_version.h"
#include "device_host/nvshmem_common.cuh"
#include "device/nvshmem_device_macros.h"
#include "device_host_transport/nvshmem_common_ibgda.h"

// NVSHMEM's IBGDA state, this translation unit's copy (see above); upload_state() fills it.
static __constant__ nvshmemi_ibgda_device_state_t nvshmemi_ibgda_device_state_d;

#include "non_abi/device/pt-to-pt/ibgda_device.cuh"

#include "dissect/nic/handles.h"
#include "dissect/nic/nic.h"
#include "dissect/peers/device_record.h"

namespace dissect::peers::nvshmem_ibgda {

inline constexpr const char* LIBRARY = "NVSHMEM IBGDA (internal device path)";
inline std::string version() {
  return std::to_string(NVSHMEM_VENDOR_MAJOR_VERSION) + "." +
         std::to_string(NVSHMEM_VENDOR_MINOR_VERSION) + "." +
         std::to_string(NVSHMEM_VENDOR_PATCH_VERSION);
}

__host__ __device__ constexpr uint32_t mkey(uint32_t key) {
  return ((key & 0xffu) << 24) | ((key & 0xff00u) << 8) | ((key >> 8) & 0xff00u) | (key >> 24);
}

// The softnic QP NVSHMEM's IBGDA runs on (see above): a ring of `sq_wqebbs` (NVSHMEM's nwqes is
// 16 bits and its depth at most NVSHMEMI_IBGDA_MAX_QP_DEPTH), its send CQ collapsed and as deep
// (ncqes: how far behind entry 0 may be).
inline nic::QpAttributes attributes(nic::Placement placement, uint32_t sq_wqebbs = 256) {
  nic::QpAttributes a;
  a.sq_wqebbs = sq_wqebbs;
  a.placement = placement;
  a.send_cq_collapsed = true;
  return a;
}

// NVSHMEM's QP and its CQ, one record: the CQ's counter pointers point into the QP's mvars.
struct Records {
  nvshmemi_ibgda_device_qp_t qp;
  nvshmemi_ibgda_device_cq_t cq;
};

// The records of the fresh softnic QP `qp` at device address `home`. Throws InvalidArgument
// naming the QP and the value when its send CQ is not collapsed or its ring is deeper than
// NVSHMEM's NVSHMEMI_IBGDA_MAX_QP_DEPTH.
Records make_records(const nic::QpHandle& qp, Records* home);

// make_records' records in GPU global memory on `device`; presets CQE 0's wqe_counter to 0xffff
// (NVSHMEM's CQ initialisation, which ibgda_poll_cq relies on for the first WQE).
class Qp {
 public:
  Qp(const nic::QpHandle& qp, int device, cudaStream_t stream);
  nvshmemi_ibgda_device_qp_t* device_qp() const { return &static_cast<Records*>(home_.get())->qp; }
  Records read_back(cudaStream_t stream) const;

 private:
  DeviceRecord home_;
};

// NVSHMEM's all-QP quiet (nvshmemi_ibgda_quiet, what nvshmem_quiet runs on IBGDA) walks the PE's
// RC table, state->globalmem.rcs: num_rc_per_pe QP records for each of npes PEs, skipping its own
// PE's. An RC table lays `qps` softnic QPs out as PE 1's QPs of a two-PE job seen from PE 0:
// entries [0, qps) are PE 0's own (zero, never read), [qps, 2 qps) the QPs, then their CQ
// records. It lives in device memory the caller allocates before the engine starts
// (rc_table_bytes; e.g. LoopbackQps::scratch); upload_rc_table fills it from fresh QPs' handles
// (each send CQ collapsed) and presets each CQE 0's wqe_counter as Qp does.
size_t rc_table_bytes(uint32_t qps);
void upload_rc_table(const nic::QpHandle* handles, uint32_t qps, void* home, cudaStream_t stream);
__host__ __device__ inline nvshmemi_ibgda_device_qp_t* rc_table_qps(void* home) {
  return static_cast<nvshmemi_ibgda_device_qp_t*>(home);
}
// QP i's record in the table (device address).
__host__ __device__ inline nvshmemi_ibgda_device_qp_t* rc_table_qp(void* home, uint32_t qps,
                                                                    uint32_t i) {
  return rc_table_qps(home) + qps + i;
}

// Fills this translation unit's nvshmemi_ibgda_device_state_d on the current device (static:
// each unit has its own constant, and its own copy of this function). `rcs` and `rc_per_pe`: an RC
// table for quiet_all (then nvshmemi_device_state_d, also this unit's, says npes 2, mype 0).
static inline void upload_state(cudaStream_t stream, nvshmemi_ibgda_device_qp_t* rcs = nullptr,
                                uint32_t rc_per_pe = 1) {
  nvshmemi_ibgda_device_state_t s{};
  s.version = (1 << 16) + sizeof(nvshmemi_ibgda_device_state_t);
  s.num_rc_per_pe = rc_per_pe;
  s.globalmem.rcs = rcs;
  s.rc_map_type = NVSHMEMI_IBGDA_DEVICE_QP_MAP_TYPE_CTA;
  s.dci_map_type = NVSHMEMI_IBGDA_DEVICE_QP_MAP_TYPE_INVALID;
  s.num_requests_in_batch = 1;  // a power of two; 1: ibgda_submit_requests posts every request
  s.num_devices_initialized = 1;
  s.nic_buf_on_gpumem = true;   // queues in GPU memory: IBGDA_MEMBAR is __threadfence
  s.may_skip_cst = true;
  s.use_async_postsend = false;  // ring from the GPU thread (ibgda_post_send), no proxy
  static nvshmemi_device_host_state_t pe{};  // static: large; only npes and mype are read
  pe.npes = 2;
  pe.mype = 0;
  cudaError_t e = cudaMemcpyToSymbolAsync(nvshmemi_ibgda_device_state_d, &s, sizeof s, 0,
                                          cudaMemcpyHostToDevice, stream);
  if (e == cudaSuccess) {
    e = cudaMemcpyToSymbolAsync(nvshmemi_device_state_d, &pe, sizeof pe, 0,
                                cudaMemcpyHostToDevice, stream);
  }
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  if (e != cudaSuccess) {
    throw std::runtime_error(std::string("nvshmemi_ibgda_device_state_d upload: ") +
                             cudaGetErrorString(e));
  }
}

// ---- device side: NVSHMEM's internal path, one thread on an RC QP no other thread uses ---------
// (NVSHMEM declares its ibgda_* functions for the device pass only: the bodies below are too.)

// One RDMA WRITE of `bytes` from registered local memory; returns the WQE index + 1 to quiet for.
__device__ inline uint64_t put(nvshmemi_ibgda_device_qp_t* qp, uint64_t laddr, uint32_t lkey_be,
                               uint64_t raddr, uint32_t rkey_be, uint32_t bytes) {
#ifdef __CUDA_ARCH__
  const uint64_t wqe_idx = ibgda_reserve_wqe_slots(qp, 1, false);
  void* wqes[1] = {ibgda_get_wqe_ptr(qp, static_cast<uint16_t>(wqe_idx))};
  ibgda_write_rdma_write_wqe<false>(qp, nullptr, laddr, lkey_be, raddr, rkey_be, bytes,
                                    static_cast<uint16_t>(wqe_idx), MLX5_WQE_CTRL_CQ_UPDATE, wqes);
  ibgda_submit_requests<false>(qp, wqe_idx, 1);
  return wqe_idx + 1;
#else
  return 0;
#endif
}

// One inline RDMA WRITE of `value` (nvshmem_p's WQE, ibgda_write_rdma_write_inl_wqe).
template <typename T>
__device__ inline uint64_t p(nvshmemi_ibgda_device_qp_t* qp, T value, uint64_t raddr,
                             uint32_t rkey_be) {
#ifdef __CUDA_ARCH__
  const uint64_t wqe_idx = ibgda_reserve_wqe_slots(qp, 1, false);
  void* wqes[1] = {ibgda_get_wqe_ptr(qp, static_cast<uint16_t>(wqe_idx))};
  ibgda_write_rdma_write_inl_wqe<false>(qp, nullptr, &value, raddr, rkey_be, sizeof(T),
                                        static_cast<uint16_t>(wqe_idx), MLX5_WQE_CTRL_CQ_UPDATE,
                                        wqes);
  ibgda_submit_requests<false>(qp, wqe_idx, 1);
  return wqe_idx + 1;
#else
  return 0;
#endif
}

// ibgda_quiet's poll, with the verdict it drops (its assert vanishes under NDEBUG): 0 when every
// WQE below `ready_head` completed; the error CQE's syndrome (> 0); -ETIME when NVSHMEM's own
// poll timeout passed (it printed the QP and the index).
__device__ inline int quiet(nvshmemi_ibgda_device_qp_t* qp) {
#ifdef __CUDA_ARCH__
  const uint64_t ready = ibgda_atomic_read(&qp->mvars.tx_wq.ready_head);
  nvshmemi_ibgda_device_cq_t cq = *qp->tx_wq.cq;
  int error = 0;
  if (ibgda_poll_cq(&cq, ready, &error) == 0) return 0;
  return error != 0 ? error : -EIO;
#else
  return -ENOSYS;
#endif
}

// NVSHMEM's own all-QP quiet over the RC table upload_state was given (one thread: every QP of
// the other PE, each through ibgda_quiet; may_skip_cst, so no consistency READ). It reports
// failures only by printf, so the verdict is read after: 0 when `mine` (a QP of the table) has
// completed every WQE below its ready_head, -EIO otherwise.
__device__ inline int quiet_all(nvshmemi_ibgda_device_qp_t* mine) {
#ifdef __CUDA_ARCH__
  nvshmemi_ibgda_quiet<NVSHMEMI_THREADGROUP_THREAD>();
  const uint64_t ready = ibgda_atomic_read(&mine->mvars.tx_wq.ready_head);
  return ibgda_atomic_read(&mine->mvars.tx_wq.cons_idx) >= ready ? 0 : -EIO;
#else
  return -ENOSYS;
#endif
}

}  // namespace dissect::peers::nvshmem_ibgda
