// Private: one QP's queue memory (queue_pair.cpp): the attribute checks, one layout, the initial
// CQE ownership, and what the engine (QpContext) and the submitters (QpHandle, RecvQueueHandle) are
// given of it. The NIC's table memory writes the initial bytes: in place, or uploaded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "dissect/common/error.h"
#include "dissect/mlx5/cqe.h"
#include "dissect/mlx5/doorbell.h"
#include "dissect/mlx5/ring.h"
#include "dissect/mlx5/wqe.h"
#include "dissect/nic/nic.h"
#include "dissect/softnic/impl/context.h"

namespace dissect::softnic {

// Where a QP's telemetry post stamps (one uint64_t per send WQEBB) live.
enum class PostStamps {
  in_queue_memory,  // at the end of the QP's allocation (host submitters: device = -1)
  elsewhere,        // in the QP's telemetry slot (GPU memory, for GPU submitters)
};

// One allocation per QP holds every queue the submitter and the engine share, each at a 64 B
// boundary: send ring, send CQ, receive ring, receive CQ, doorbell record, doorbell register,
// submitter state, receive head, receive CQ consumer index; then, with
// PostStamps::in_queue_memory, the post stamps.
struct QueueMemory {
  uint8_t* base = nullptr;  // the send ring
  size_t bytes = 0;
  mlx5::mlx5_cqe64* send_cqes = nullptr;
  mlx5::mlx5_cqe64* recv_cqes = nullptr;
  mlx5::mlx5_wqe_data_seg* rq = nullptr;  // null when the QP has no receive queue
  mlx5::mlx5_qp_dbrec* dbrec = nullptr;
  uint64_t* doorbell = nullptr;            // the engine's register (QpContext::doorbell)
  uint64_t* submitter_doorbell = nullptr;  // QpHandle::doorbell: the register, or its mailbox
                                           // (cpu-assisted: doorbell_forwarder.h route_doorbell)
  nic::SendQueueState* state = nullptr;
  uint64_t* recv_head = nullptr;
  uint64_t* recv_cq_ci = nullptr;
  uint64_t* post_stamps = nullptr;  // null with PostStamps::elsewhere
};

// The receive CQ has one entry per receive WQE, and one when there is no receive queue.
inline uint32_t recv_cq_entries(const nic::QpAttributes& a) { return a.rq_wqes ? a.rq_wqes : 1; }
inline uint32_t recv_cqn(uint32_t qpn) { return qpn | 0x800000; }

// `a` checked as a QP's attributes, returned with cq_entries resolved (0 = sq_wqebbs). Throws
// InvalidArgument naming the attribute and its value.
inline nic::QpAttributes checked_queue_attributes(nic::QpAttributes a) {
  nic::check_queue_depth("send queue depth (WQEBBs)", a.sq_wqebbs, mlx5::MLX5_MAX_SQ_WQEBBS);
  if (a.cq_entries == 0) a.cq_entries = a.sq_wqebbs;
  nic::check_queue_depth("send CQ depth", a.cq_entries, 1u << 22);
  if (a.cq_entries < a.sq_wqebbs) {
    throw InvalidArgument("send CQ depth " + std::to_string(a.cq_entries) +
                          " is below the send queue depth " + std::to_string(a.sq_wqebbs) +
                          ": the CQ could overrun");
  }
  if (a.rq_wqes != 0) nic::check_queue_depth("receive queue depth", a.rq_wqes, 1u << 15);
  if (a.doorbell != nic::DoorbellPath::direct && a.doorbell != nic::DoorbellPath::cpu_assisted) {
    throw InvalidArgument("doorbell path = " + std::to_string(static_cast<int>(a.doorbell)) +
                          " is neither direct nor cpu-assisted");
  }
  if (a.max_inline > mlx5::RC_MAX_INLINE_BY_DS ||
      mlx5::wqebbs_for_ds(mlx5::rc_write_inline_ds(a.max_inline)) > a.sq_wqebbs) {
    throw InvalidArgument("max_inline = " + std::to_string(a.max_inline) +
                          " bytes does not fit one WQE of a " + std::to_string(a.sq_wqebbs) +
                          "-WQEBB send queue (limit " +
                          std::to_string(mlx5::RC_MAX_INLINE_BY_DS) + ")");
  }
  return a;
}

// Allocates from `nic` (zero-filled, in a.placement) the queue memory of a QP whose attributes
// went through checked_queue_attributes, and lays the queues out in it. Its CQEs still read as
// zero: mark_cqes_invalid writes their initial ownership.
inline QueueMemory allocate_queue_memory(nic::Nic& nic, const nic::QpAttributes& a,
                                         PostStamps stamps) {
  const size_t sq_bytes = size_t{a.sq_wqebbs} * mlx5::MLX5_SEND_WQE_BB;
  const size_t cq_bytes = size_t{a.cq_entries} * mlx5::MLX5_CQE_SIZE;
  const size_t rq_bytes = (size_t{a.rq_wqes} * sizeof(mlx5::mlx5_wqe_data_seg) + 63) & ~size_t{63};
  const size_t rq_cq_bytes = size_t{recv_cq_entries(a)} * mlx5::MLX5_CQE_SIZE;
  const size_t stamp_bytes =
      stamps == PostStamps::in_queue_memory ? size_t{a.sq_wqebbs} * sizeof(uint64_t) : 0;
  QueueMemory m;
  m.bytes = sq_bytes + cq_bytes + rq_bytes + rq_cq_bytes + 5 * 64 + stamp_bytes;
  m.base = static_cast<uint8_t*>(nic.allocate(m.bytes, a.placement));
  uint8_t* p = m.base + sq_bytes;
  m.send_cqes = reinterpret_cast<mlx5::mlx5_cqe64*>(p), p += cq_bytes;
  m.rq = a.rq_wqes ? reinterpret_cast<mlx5::mlx5_wqe_data_seg*>(p) : nullptr, p += rq_bytes;
  m.recv_cqes = reinterpret_cast<mlx5::mlx5_cqe64*>(p), p += rq_cq_bytes;
  m.dbrec = reinterpret_cast<mlx5::mlx5_qp_dbrec*>(p), p += 64;
  m.doorbell = reinterpret_cast<uint64_t*>(p), p += 64;
  m.submitter_doorbell = m.doorbell;
  m.state = reinterpret_cast<nic::SendQueueState*>(p), p += 64;
  m.recv_head = reinterpret_cast<uint64_t*>(p), p += 64;
  m.recv_cq_ci = reinterpret_cast<uint64_t*>(p), p += 64;
  m.post_stamps = stamp_bytes != 0 ? reinterpret_cast<uint64_t*>(p) : nullptr;
  return m;
}

// Marks every CQE of both CQs invalid (owned by the NIC) in `image`: m.bytes bytes standing for
// the queue memory, i.e. m.base itself where this process can store to it, or a zero-filled copy
// the caller then uploads.
inline void mark_cqes_invalid(const QueueMemory& m, const nic::QpAttributes& a, uint8_t* image) {
  auto mark = [&](const mlx5::mlx5_cqe64* cqes, uint32_t count) {
    auto* in_image = reinterpret_cast<mlx5::mlx5_cqe64*>(
        image + (reinterpret_cast<const uint8_t*>(cqes) - m.base));
    for (uint32_t i = 0; i < count; ++i) in_image[i].op_own = mlx5::MLX5_CQE_INITIAL_OP_OWN;
  };
  mark(m.send_cqes, a.cq_entries);
  mark(m.recv_cqes, recv_cq_entries(a));
}

// The engine's context of a new QP over `m`: RESET, not connected.
inline QpContext make_queue_context(const QueueMemory& m, const nic::QpAttributes& a, uint32_t qpn,
                                    uint32_t pd) {
  QpContext qp{};
  qp.qpn = qpn;
  qp.state = QP_STATE_RESET;
  qp.pd = pd;
  qp.sq = mlx5::send_ring{m.base, a.sq_wqebbs};
  qp.dbrec = m.dbrec;
  qp.doorbell = m.doorbell;
  qp.send_cq = CqContext{m.send_cqes, a.cq_entries, qpn, 0, a.send_cq_collapsed ? 1u : 0u, 0};
  qp.rq = m.rq;
  qp.rq_wqe_count = a.rq_wqes;
  qp.recv_cq = CqContext{m.recv_cqes, recv_cq_entries(a), recv_cqn(qpn), 0};
  return qp;
}

// The submitter's handle of the send side. `telemetry` and `post_stamps` are where this softnic
// keeps them (null when telemetry is off).
inline nic::QpHandle make_send_handle(const QueueMemory& m, const nic::QpAttributes& a,
                                      uint32_t qpn, telemetry::QpCounters* telemetry,
                                      uint64_t* post_stamps, uint64_t sample_mask) {
  nic::QpHandle h{};
  h.sq = mlx5::send_ring{m.base, a.sq_wqebbs};
  h.qpn = qpn;
  h.max_inline = a.max_inline;
  h.dbrec_send = &m.dbrec->send_counter;
  h.doorbell = m.submitter_doorbell;
  h.state = m.state;
  h.send_cq = nic::CqHandle{m.send_cqes, a.cq_entries, qpn, nullptr, a.send_cq_collapsed ? 1u : 0u};
  nic::attach_telemetry(h, telemetry, post_stamps, sample_mask);
  return h;
}

inline nic::RecvQueueHandle make_recv_handle(const QueueMemory& m, const nic::QpAttributes& a,
                                             uint32_t qpn) {
  nic::RecvQueueHandle h{};
  h.rq = m.rq;
  h.wqe_count = a.rq_wqes;
  h.dbrec_recv = &m.dbrec->rcv_counter;
  h.head = m.recv_head;
  h.recv_cq = nic::CqHandle{m.recv_cqes, recv_cq_entries(a), recv_cqn(qpn), nullptr};
  h.recv_cq_ci = m.recv_cq_ci;
  return h;
}

}  // namespace dissect::softnic
