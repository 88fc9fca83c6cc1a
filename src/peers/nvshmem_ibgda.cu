#include "dissect/peers/nvshmem_ibgda.cuh"

#include <cstddef>
#include <string>

#include "dissect/common/cuda.h"
#include "dissect/common/error.h"

namespace dissect::peers::nvshmem_ibgda {
namespace {

template <typename T>
T* field(Records* home, size_t offset) {
  return reinterpret_cast<T*>(reinterpret_cast<char*>(home) + offset);
}

}  // namespace

Records make_records(const nic::QpHandle& qp, Records* home) {
  if (qp.sq.wqebb_count != 1 || qp.send_cq.cqe_count != 1) {
    throw InvalidArgument("nvshmem-ibgda: QP " + std::to_string(qp.qpn) + " has " +
                          std::to_string(qp.sq.wqebb_count) + " WQEBBs and " +
                          std::to_string(qp.send_cq.cqe_count) +
                          " CQEs: NVSHMEM polls a collapsed CQ (entry 0 only), which the softnic "
                          "gives only as a 1-WQEBB QP with a 1-entry CQ (collapsed_cq_attributes)");
  }
  Records r{};
  const size_t mvars = offsetof(Records, qp) + offsetof(nvshmemi_ibgda_device_qp_t, mvars);
  const size_t wq = mvars + offsetof(nvshmemi_ibgda_device_qp_management_t, tx_wq);
  using Wq = decltype(nvshmemi_ibgda_device_qp_management_t::tx_wq);

  r.cq.version = (1 << 16) + sizeof(nvshmemi_ibgda_device_cq_t);
  r.cq.qp_type = NVSHMEMI_IBGDA_DEVICE_QP_TYPE_RC;
  r.cq.cqe = qp.send_cq.cqes;
  r.cq.cqn = qp.send_cq.cqn;
  r.cq.ncqes = qp.sq.wqebb_count;  // how far behind a CQE may be: one outstanding WQE
  r.cq.qpn = qp.qpn;
  r.cq.dbrec = reinterpret_cast<__be32*>(qp.send_cq.dbrec);
  r.cq.prod_idx = field<uint64_t>(home, wq + offsetof(Wq, prod_idx));
  r.cq.cons_idx = field<uint64_t>(home, wq + offsetof(Wq, cons_idx));
  r.cq.resv_head = field<uint64_t>(home, wq + offsetof(Wq, resv_head));
  r.cq.ready_head = field<uint64_t>(home, wq + offsetof(Wq, ready_head));

  r.qp.version = (1 << 16) + sizeof(nvshmemi_ibgda_device_qp_t);
  r.qp.qp_type = NVSHMEMI_IBGDA_DEVICE_QP_TYPE_RC;
  r.qp.qpn = qp.qpn;
  r.qp.dev_idx = 0;
  r.qp.tx_wq.nwqes = static_cast<uint16_t>(qp.sq.wqebb_count);
  r.qp.tx_wq.wqe = qp.sq.buffer;
  r.qp.tx_wq.dbrec = reinterpret_cast<__be32*>(qp.dbrec_send);
  r.qp.tx_wq.bf = qp.doorbell;  // ibgda_ring_db: one 8-byte store of the synthetic ctrl word
  r.qp.tx_wq.cq = field<nvshmemi_ibgda_device_cq_t>(home, offsetof(Records, cq));
  r.qp.tx_wq.prod_idx = r.cq.prod_idx;
  r.qp.mvars.version = (1 << 16) + sizeof(nvshmemi_ibgda_device_qp_management_t);
  r.qp.mvars.post_send_lock = 0;  // counters 0: a fresh QP; no ibuf (no fetching operations)
  return r;
}

Qp::Qp(const nic::QpHandle& qp, int device, cudaStream_t stream)
    : home_(device, sizeof(Records), stream) {
  const Records r = make_records(qp, static_cast<Records*>(home_.get()));
  home_.upload(&r, sizeof r, stream);
  // NVSHMEM fills its CQs with 0xff; the wqe_counter of entry 0 is what ibgda_poll_cq compares.
  const uint16_t none = 0xffff;
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
  check_cuda(cudaMemcpyAsync(&qp.send_cq.cqes[0].wqe_counter, &none, sizeof none,
                             cudaMemcpyDefault, stream), "preset CQE 0 wqe_counter");
  check_cuda(cudaStreamSynchronize(stream), "preset CQE 0 wqe_counter");
}

Records Qp::read_back(cudaStream_t stream) const {
  Records r{};
  home_.download(&r, sizeof r, stream);
  return r;
}

}  // namespace dissect::peers::nvshmem_ibgda
