#include "dissect/peers/gdaki.cuh"

#include <string>

#include "dissect/common/error.h"

namespace dissect::peers::gdaki {
namespace {

uint32_t be32(uint32_t v) { return mkey(v); }  // a 32-bit byte swap, as mkey does

doca_gpu_dev_verbs_mem_type mem_type(nic::Placement placement) {
  return placement == nic::Placement::gpu ? DOCA_GPUNETIO_VERBS_MEM_TYPE_GPU
                                          : DOCA_GPUNETIO_VERBS_MEM_TYPE_HOST;
}

doca_gpu_dev_verbs_cq make_cq(const nic::CqHandle& cq, nic::Placement placement) {
  doca_gpu_dev_verbs_cq out{};
  out.cqe_daddr = reinterpret_cast<uint8_t*>(cq.cqes);
  out.cq_num = cq.cqn;
  out.cqe_num = cq.cqe_count;
  out.cqe_mask = cq.cqe_count - 1;
  out.dbrec = reinterpret_cast<__be32*>(cq.dbrec);  // null: DOCA's put/wait never write it
  out.cqe_size = DOCA_GPUNETIO_VERBS_CQE_SIZE;
  out.mem_type = mem_type(placement);
  return out;  // cqe_ci = cqe_rsvd = 0: nothing polled yet
}

}  // namespace

doca_gpu_dev_verbs_qp make_qp(const nic::QpHandle& qp, nic::Placement placement) {
  if (qp.sq.wqebb_count > 0x8000) {
    throw InvalidArgument("gdaki: QP " + std::to_string(qp.qpn) + " send queue of " +
                          std::to_string(qp.sq.wqebb_count) +
                          " WQEBBs: DOCA's sq_wqe_num is 16 bits (at most 32768)");
  }
  if (qp.send_cq.shared != nullptr) {
    throw InvalidArgument("gdaki: QP " + std::to_string(qp.qpn) + " shares send CQ " +
                          std::to_string(qp.send_cq.cqn) +
                          ": DOCA polls CQE i for WQE i of one QP (give the QP a CQ of its own)");
  }
  if (qp.send_cq.cqe_count < qp.sq.wqebb_count) {
    throw InvalidArgument("gdaki: QP " + std::to_string(qp.qpn) + " send CQ of " +
                          std::to_string(qp.send_cq.cqe_count) + " CQEs is below its " +
                          std::to_string(qp.sq.wqebb_count) +
                          " WQEBBs: DOCA polls CQE i for WQE i and would overrun it");
  }
  doca_gpu_dev_verbs_qp out{};
  out.sq_num = qp.qpn;
  out.sq_num_shift8 = qp.qpn << 8;
  out.sq_num_shift8_be = be32(qp.qpn << 8);
  out.sq_num_shift8_be_1ds = be32(qp.qpn << 8 | 1);
  out.sq_num_shift8_be_2ds = be32(qp.qpn << 8 | 2);
  out.sq_num_shift8_be_3ds = be32(qp.qpn << 8 | 3);
  out.sq_num_shift8_be_4ds = be32(qp.qpn << 8 | 4);
  out.sq_wqe_num = static_cast<uint16_t>(qp.sq.wqebb_count);
  out.sq_wqe_mask = static_cast<uint16_t>(qp.sq.wqebb_count - 1);
  out.sq_wqe_daddr = qp.sq.buffer;
  out.sq_dbrec = reinterpret_cast<__be32*>(qp.dbrec_send);
  out.sq_db = qp.doorbell;
  out.cq_sq = make_cq(qp.send_cq, placement);
  // No receive side: DOCA's one-sided verbs never touch rq_* or cq_rq.
  out.nic_handler = DOCA_GPUNETIO_VERBS_NIC_HANDLER_GPU_SM_DB;
  out.mem_type = mem_type(placement);
  return out;  // sq_rsvd_index = sq_ready_index = sq_wqe_pi = 0, sq_lock free: a fresh QP
}

Qp::Qp(const nic::QpHandle& qp, nic::Placement placement, int device, cudaStream_t stream)
    : home_(device, sizeof(doca_gpu_dev_verbs_qp), stream) {
  const doca_gpu_dev_verbs_qp record = make_qp(qp, placement);
  home_.upload(&record, sizeof record, stream);
}

doca_gpu_dev_verbs_qp Qp::read_back(cudaStream_t stream) const {
  doca_gpu_dev_verbs_qp record{};
  home_.download(&record, sizeof record, stream);
  return record;
}

}  // namespace dissect::peers::gdaki
