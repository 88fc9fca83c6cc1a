// The receive side of WRITE WITH IMMEDIATE: post receive WQEs, poll the receive CQ.
//
// A receive WQE here is one zero-length scatter entry: the payload of a WRITE WITH IMM lands at the
// address the writer named, and the receive WQE only provides the slot for the immediate's CQE.
// Caller: one thread per receive queue.
#pragma once

#include <cstdint>

#include "dissect/common/atomic.h"
#include "dissect/gda/sharing.h"
#include "dissect/gda/status.h"
#include "dissect/mlx5/cqe.h"
#include "dissect/mlx5/doorbell.h"
#include "dissect/mlx5/wqe.h"
#include "dissect/nic/handles.h"

namespace dissect::gda {

struct ImmediateCompletion {
  mlx5::be32 immediate;
  uint32_t byte_count;
  uint8_t opcode;  // MLX5_CQE_RESP_WR_IMM, or MLX5_CQE_RESP_ERR
};

// Posts `count` receive WQEs and publishes the new producer counter in the doorbell record.
template <Scope S = Scope::system>
DISSECT_HD inline void post_receives(const nic::RecvQueueHandle& rq, uint32_t count) {
  uint64_t head = *rq.head;
  for (uint32_t i = 0; i < count; ++i, ++head) {
    mlx5::set_data_seg(&rq.rq[head & (rq.wqe_count - 1)], 0, mlx5::MLX5_INVALID_LKEY, 0);
  }
  *rq.head = head;
  store_release<S>(&rq.dbrec_recv->raw, mlx5::dbrec_value(head).raw);
}

// Takes the next receive CQE if there is one; returns false when the CQ is empty.
template <Scope S = Scope::system>
DISSECT_HD inline bool poll_receive(const nic::RecvQueueHandle& rq, ImmediateCompletion* out) {
  const uint64_t ci = *rq.recv_cq_ci;
  mlx5::mlx5_cqe64* cqe = &rq.recv_cq.cqes[ci & (rq.recv_cq.cqe_count - 1)];
  const uint32_t tail = load_acquire<S>(reinterpret_cast<uint32_t*>(cqe) + 15);
  const uint8_t op_own = static_cast<uint8_t>(tail >> 24);
  if (!mlx5::cqe_is_sw_owned(op_own, ci, rq.recv_cq.cqe_count)) return false;
  out->immediate = cqe->imm_inval_pkey;
  out->byte_count = cqe->byte_cnt.value();
  out->opcode = mlx5::cqe_opcode(op_own);
  *rq.recv_cq_ci = ci + 1;
  return true;
}

template <Scope S = Scope::system>
DISSECT_HD inline Status wait_receive(const nic::RecvQueueHandle& rq, ImmediateCompletion* out,
                                      uint32_t qpn, uint64_t timeout_ns = DEFAULT_WAIT_TIMEOUT_NS) {
  BoundedWait wait(timeout_ns);
  while (!poll_receive<S>(rq, out)) {
    if (wait.expired()) {
      return report_timeout("a receive completion", WaitOn::qp, qpn, *rq.recv_cq_ci,
                            *rq.recv_cq_ci, wait.waited_ns());
    }
  }
  return Status::ok;
}

}  // namespace dissect::gda
