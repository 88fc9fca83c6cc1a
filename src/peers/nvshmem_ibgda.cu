#include "dissect/peers/nvshmem_ibgda.cuh"

#include <cstddef>
#include <string>
#include <vector>

#include "dissect/common/cuda.h"
#include "dissect/common/error.h"

namespace dissect::peers::nvshmem_ibgda {
namespace {

// `offset` bytes into the device record at `home` (an address only; never dereferenced here).
template <typename T>
T* field(void* home, size_t offset) {
  return reinterpret_cast<T*>(reinterpret_cast<char*>(home) + offset);
}

void check_qp(const nic::QpHandle& qp) {
  if (qp.send_cq.collapsed == 0) {
    throw InvalidArgument("nvshmem-ibgda: QP " + std::to_string(qp.qpn) + " send CQ " +
                          std::to_string(qp.send_cq.cqn) +
                          " is not collapsed: NVSHMEM's ibgda_poll_cq reads entry 0 only; create "
                          "the QP with nvshmem_ibgda::attributes (send_cq_collapsed)");
  }
  if (qp.sq.wqebb_count > NVSHMEMI_IBGDA_MAX_QP_DEPTH || qp.send_cq.cqe_count < qp.sq.wqebb_count) {
    throw InvalidArgument("nvshmem-ibgda: QP " + std::to_string(qp.qpn) + " has " +
                          std::to_string(qp.sq.wqebb_count) + " WQEBBs and a " +
                          std::to_string(qp.send_cq.cqe_count) +
                          "-entry CQ: NVSHMEM takes at most " +
                          std::to_string(NVSHMEMI_IBGDA_MAX_QP_DEPTH) +
                          " WQEBBs, and a CQ at least as deep");
  }
}

// NVSHMEM's QP record and its CQ record for `qp`, to live at device addresses `qp_home` and
// `cq_home`: the CQ's counter pointers point into the QP record's mvars.
void fill(const nic::QpHandle& qp, void* qp_home, void* cq_home, nvshmemi_ibgda_device_qp_t& q,
          nvshmemi_ibgda_device_cq_t& c) {
  check_qp(qp);
  const size_t wq = offsetof(nvshmemi_ibgda_device_qp_t, mvars) +
                    offsetof(nvshmemi_ibgda_device_qp_management_t, tx_wq);
  using Wq = decltype(nvshmemi_ibgda_device_qp_management_t::tx_wq);

  c = nvshmemi_ibgda_device_cq_t{};
  c.version = (1 << 16) + sizeof(nvshmemi_ibgda_device_cq_t);
  c.qp_type = NVSHMEMI_IBGDA_DEVICE_QP_TYPE_RC;
  c.cqe = qp.send_cq.cqes;
  c.cqn = qp.send_cq.cqn;
  c.ncqes = qp.sq.wqebb_count;  // how far entry 0 may lag: the ring (NVSHMEM: its QP depth)
  c.qpn = qp.qpn;
  c.dbrec = reinterpret_cast<__be32*>(qp.send_cq.dbrec);
  c.prod_idx = field<uint64_t>(qp_home, wq + offsetof(Wq, prod_idx));
  c.cons_idx = field<uint64_t>(qp_home, wq + offsetof(Wq, cons_idx));
  c.resv_head = field<uint64_t>(qp_home, wq + offsetof(Wq, resv_head));
  c.ready_head = field<uint64_t>(qp_home, wq + offsetof(Wq, ready_head));

  q = nvshmemi_ibgda_device_qp_t{};
  q.version = (1 << 16) + sizeof(nvshmemi_ibgda_device_qp_t);
  q.qp_type = NVSHMEMI_IBGDA_DEVICE_QP_TYPE_RC;
  q.qpn = qp.qpn;
  q.dev_idx = 0;
  q.tx_wq.nwqes = static_cast<uint16_t>(qp.sq.wqebb_count);
  q.tx_wq.wqe = qp.sq.buffer;
  q.tx_wq.dbrec = reinterpret_cast<__be32*>(qp.dbrec_send);
  q.tx_wq.bf = qp.doorbell;  // ibgda_ring_db: one 8-byte store of the synthetic ctrl word
  q.tx_wq.cq = static_cast<nvshmemi_ibgda_device_cq_t*>(cq_home);
  q.tx_wq.prod_idx = c.prod_idx;
  q.mvars.version = (1 << 16) + sizeof(nvshmemi_ibgda_device_qp_management_t);
  q.mvars.post_send_lock = 0;  // counters 0: a fresh QP; no ibuf (no fetching operations)
}

// NVSHMEM fills its CQs with 0xff; the wqe_counter of entry 0 is what ibgda_poll_cq compares
// (0xffff: "WQE -1", so that WQE 0 is still awaited).
void preset_cqe0(const nic::QpHandle& qp, cudaStream_t stream) {
  const uint16_t none = 0xffff;
  check_cuda(cudaMemcpyAsync(&qp.send_cq.cqes[0].wqe_counter, &none, sizeof none,
                             cudaMemcpyDefault, stream), "preset CQE 0 wqe_counter");
}

}  // namespace

Records make_records(const nic::QpHandle& qp, Records* home) {
  Records r{};
  fill(qp, field<void>(home, offsetof(Records, qp)), field<void>(home, offsetof(Records, cq)),
       r.qp, r.cq);
  return r;
}

size_t rc_table_bytes(uint32_t qps) {
  return size_t{qps} *
         (2 * sizeof(nvshmemi_ibgda_device_qp_t) + sizeof(nvshmemi_ibgda_device_cq_t));
}

void upload_rc_table(const nic::QpHandle* handles, uint32_t qps, void* home, cudaStream_t stream) {
  std::vector<nvshmemi_ibgda_device_qp_t> table(2 * size_t{qps});  // PE 0's half stays zero
  std::vector<nvshmemi_ibgda_device_cq_t> cqs(qps);
  auto* cq_home =
      reinterpret_cast<nvshmemi_ibgda_device_cq_t*>(rc_table_qps(home) + 2 * size_t{qps});
  for (uint32_t i = 0; i < qps; ++i) {
    fill(handles[i], rc_table_qp(home, qps, i), cq_home + i, table[qps + i], cqs[i]);
    preset_cqe0(handles[i], stream);
  }
  check_cuda(cudaMemcpyAsync(home, table.data(), table.size() * sizeof table[0],
                             cudaMemcpyHostToDevice, stream), "upload NVSHMEM RC table");
  check_cuda(cudaMemcpyAsync(cq_home, cqs.data(), cqs.size() * sizeof cqs[0],
                             cudaMemcpyHostToDevice, stream), "upload NVSHMEM CQ records");
  check_cuda(cudaStreamSynchronize(stream), "upload NVSHMEM RC table");
}

Qp::Qp(const nic::QpHandle& qp, int device, cudaStream_t stream)
    : home_(device, sizeof(Records), stream) {
  const Records r = make_records(qp, static_cast<Records*>(home_.get()));
  home_.upload(&r, sizeof r, stream);
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
  preset_cqe0(qp, stream);
  check_cuda(cudaStreamSynchronize(stream), "preset CQE 0 wqe_counter");
}

Records Qp::read_back(cudaStream_t stream) const {
  Records r{};
  home_.download(&r, sizeof r, stream);
  return r;
}

}  // namespace dissect::peers::nvshmem_ibgda
