// Completions: consuming the send CQ and waiting for a WQEBB index to be retired.
//
// One CQE with wqe_counter = w retires every WQE up to and including the one starting at w
// (send queues complete in order), so `cons_idx` becomes w plus that WQE's size in WQEBBs, read
// from its control segment, which stays intact until cons_idx passes it. The CQ is polled with
// the owner bit (rdma-core get_sw_cqe); the last word of the CQE (wqe_counter | signature |
// op_own) is read with one load of the policy's scope, as DOCA does.
//
// Sharing::shared pollers claim a CQE with a CAS on cq_ci after reading it, so a stale read is
// discarded rather than acted on. A CQ shared by several QPs (send_cq.shared) is consumed by
// poll_shared_cq, which retires each CQE on the QP it names.
#pragma once

#include <cstdint>

#include "dissect/common/atomic.h"
#include "dissect/gda/doorbell.h"
#include "dissect/gda/ordering.h"
#include "dissect/gda/sharing.h"
#include "dissect/gda/status.h"
#include "dissect/mlx5/cqe.h"
#include "dissect/mlx5/ring.h"
#include "dissect/nic/handles.h"

namespace dissect::gda {

struct CqeTail {
  uint16_t wqe_counter;
  uint8_t op_own;
};

template <typename Ordering>
DISSECT_HD inline CqeTail read_cqe_tail(const mlx5::mlx5_cqe64* cqe) {
  // Bytes 60..63: wqe_counter (BE16), signature, op_own.
  const uint32_t word =
      Ordering::poll_load(reinterpret_cast<uint32_t*>(const_cast<mlx5::mlx5_cqe64*>(cqe)) + 15);
  const uint16_t counter_be = static_cast<uint16_t>(word & 0xffff);
  return CqeTail{mlx5::byte_swap(counter_be), static_cast<uint8_t>(word >> 24)};
}

// Records the first error CQE in the QP's state; later ones keep the first.
DISSECT_HD inline void record_cq_error(const nic::QpHandle& qp, const mlx5::mlx5_cqe64* cqe,
                                       uint64_t wqe_start) {
  const auto* error = reinterpret_cast<const mlx5::mlx5_err_cqe*>(cqe);
  const uint32_t opcode = error->s_wqe_opcode_qpn.value() >> 24;
  const uint32_t code = nic::SEND_QUEUE_ERROR_VALID | (opcode << 8) | error->syndrome;
  if (compare_exchange<Scope::gpu>(&qp.state->error, 0u, code)) {
    store_relaxed<Scope::gpu>(&qp.state->error_wqe, wqe_start);
  }
}

// The ds of the WQE starting at WQEBB `index` of `qp`'s send queue (its ctrl segment), and the
// WQEBB after a WQE of that ds starting at `start` (a zero ds counts one WQEBB).
DISSECT_HD inline uint32_t wqe_ds_at(const nic::QpHandle& qp, uint64_t index) {
  return mlx5::ctrl_ds(*reinterpret_cast<const mlx5::mlx5_wqe_ctrl_seg*>(qp.sq.wqebb(index)));
}
DISSECT_HD inline uint64_t wqe_end(uint64_t start, uint32_t ds) {
  return start + (ds ? mlx5::wqebbs_for_ds(ds) : 1);
}

// The WQEBB index a CQE of `qp` retires up to: the CQE's WQE start (its 16-bit wqe_counter widened
// against prod_idx) plus that WQE's size, from its control segment.
template <Sharing S>
DISSECT_HD inline uint64_t retired_by(const nic::QpHandle& qp, const CqeTail& tail, uint64_t* start) {
  *start = mlx5::widen_index16(tail.wqe_counter, counter_load<S>(&qp.state->prod_idx));
  return wqe_end(*start, wqe_ds_at(qp, *start));
}

// The member of a shared CQ that QPN `qpn` names (handles.h: SharedCqState), or null when none
// does. A member's slot and handle were written before its first post, so before any CQE of it.
DISSECT_HD inline const nic::QpHandle* shared_cq_member(const nic::SharedCqState& cq, uint32_t qpn) {
  const uint32_t mask = cq.member_mask;
  uint32_t slot = nic::member_slot(qpn, mask);
  for (uint32_t probes = 0; probes <= mask; ++probes, slot = (slot + 1) & mask) {
    const uint32_t held = load_relaxed<Scope::system>(&cq.member_qpns[slot]);
    if (held == qpn) return &cq.members[slot];
    if (held == nic::EMPTY_MEMBER) return nullptr;
  }
  return nullptr;
}

// The CQE at consumer index `ci` of a send CQ, its tail read with the ordering's poll load;
// `owned` false while the NIC has not written it for this lap.
struct CqeAt {
  uint64_t ci;
  const mlx5::mlx5_cqe64* cqe;
  CqeTail tail;
  bool owned;
};

template <typename Ordering, Sharing S>
DISSECT_HD inline CqeAt cqe_at(const nic::CqHandle& cq, uint64_t* consumed) {
  const uint64_t ci = counter_load<S>(consumed);
  const mlx5::mlx5_cqe64* cqe = &cq.cqes[ci & (cq.cqe_count - 1)];
  const CqeTail tail = read_cqe_tail<Ordering>(cqe);
  return CqeAt{ci, cqe, tail, mlx5::cqe_is_sw_owned(tail.op_own, ci, cq.cqe_count)};
}

// Takes the CQE at `ci` for this poller by moving the consumer index past it: a plain store for
// the one poller (exclusive), a CAS for one of several (shared), false when another took it first.
template <Sharing S>
DISSECT_HD inline bool claim_cqe(uint64_t* consumed, uint64_t ci) {
  if constexpr (S == Sharing::exclusive) {
    *consumed = ci + 1;
    return true;
  } else {
    return compare_exchange<Scope::gpu>(consumed, ci, ci + 1);
  }
}

DISSECT_HD inline bool is_error_cqe(const CqeTail& tail) {
  return mlx5::cqe_opcode(tail.op_own) == mlx5::MLX5_CQE_REQ_ERR;
}

// One claimed CQE retired on `qp`, up to `retired` (retired_by, from the WQE at `start`): its
// first error kept, cons_idx raised (a plain update for the one poller, an atomic max for several)
// and telemetry told the range. Every CQE is counted once as drained, through note_retired,
// whether or not it retires anything new (an error CQE too: note_error counts only the error).
// The one poller's retirement up to `retired`, cons_idx being `completed` (which only it moves);
// returns the new cons_idx.
template <typename Ordering>
DISSECT_HD inline uint64_t retire_exclusive(const nic::QpHandle& qp, uint64_t completed, uint64_t retired) {
  note_retired<Ordering, Sharing::exclusive>(qp, retired > completed ? completed : retired, retired);
  if (retired <= completed) return completed;
  qp.state->cons_idx = retired;
  return retired;
}

template <typename Ordering, Sharing S>
DISSECT_HD inline void retire_cqe(const nic::QpHandle& qp, const mlx5::mlx5_cqe64* cqe,
                                  bool failed, uint64_t start, uint64_t retired) {
  if (failed) record_cq_error(qp, cqe, start), note_error<Ordering, S>(qp);
  nic::SendQueueState* state = qp.state;
  if constexpr (S == Sharing::exclusive) {
    retire_exclusive<Ordering>(qp, state->cons_idx, retired);
  } else {
    const uint64_t previous = fetch_max<Scope::gpu>(&state->cons_idx, retired);
    note_retired<Ordering, S>(qp, retired > previous ? previous : retired, retired);
  }
}

// One CQE of a shared CQ retired on `member`, the QP it names (poll_shared_cq). The member's
// prod_idx is read as shared: its own thread may be posting.
template <typename Ordering, Sharing S>
DISSECT_HD inline void retire_shared_cqe(const nic::QpHandle& member, const mlx5::mlx5_cqe64* cqe,
                                         const CqeTail& tail) {
  uint64_t start = 0;
  const uint64_t retired = retired_by<Sharing::shared>(member, tail, &start);
  retire_cqe<Ordering, S>(member, cqe, is_error_cqe(tail), start, retired);
}

// A CQ several QPs share (nic::CompletionQueue): consumes every CQE available now, each retiring
// WQEs of the member its QPN names; returns how many. Any member's poll serves every member, so
// a member's cons_idx moves under whichever thread polls. S: exclusive when one thread polls the
// CQ and waits on every member itself (a PE-wide quiet): plain updates, as poll_cq's; shared when
// several threads do: each CQE claimed with a CAS on the CQ's ci after it was read, a member's
// cons_idx raised with an atomic max and its first error kept with a CAS.
template <typename Ordering, Sharing S>
DISSECT_HD inline uint32_t poll_shared_cq(const nic::QpHandle& qp) {
  nic::SharedCqState* shared = qp.send_cq.shared;
  uint32_t consumed = 0;
  note_poll<Ordering, S>(qp);
  for (;;) {
    const CqeAt at = cqe_at<Ordering, S>(qp.send_cq, &shared->ci);
    if (!at.owned) return consumed;
    const uint32_t qpn = at.cqe->sop_drop_qpn.value() & 0xffffff;  // after the tail's acquire
    if (!claim_cqe<S>(&shared->ci, at.ci)) continue;
    ++consumed;
    // The QP polled is the member most CQEs name when its thread waits on it: no lookup. Two
    // calls rather than a pointer to either: a pointer to `qp` would put the caller's handle in
    // local memory, and every post of the kernel would read it from there (H200: +0.08 us issue).
    if (qpn == qp.qpn) {
      retire_shared_cqe<Ordering, S>(qp, at.cqe, at.tail);
    } else if (const nic::QpHandle* member = shared_cq_member(*shared, qpn)) {
      retire_shared_cqe<Ordering, S>(*member, at.cqe, at.tail);
    } else {  // a QP that left the CQ with CQEs still in it
      add_relaxed<Scope::gpu>(&shared->orphan_cqes, 1);
    }
  }
}

// Consumes every CQE available now; returns how many. Never waits. On a shared CQ, every
// member's (poll_shared_cq). A waiter of a shared QP drains them all, not only up to its own
// index: the other waiters' indexes are retired with it, and fewer of them poll (and take the
// post lock to ring, wait_completion). Stopping at its own index instead (stop 37) was followed
// twice by Table 5's (†) row timing out on the post lock, 32 waiters in one warp.
template <typename Ordering, Sharing S>
DISSECT_HD inline uint32_t poll_cq(const nic::QpHandle& qp) {
  if (qp.send_cq.shared != nullptr) return poll_shared_cq<Ordering, S>(qp);
  uint32_t consumed = 0;
  note_poll<Ordering, S>(qp);
  for (;;) {
    const CqeAt at = cqe_at<Ordering, S>(qp.send_cq, &qp.state->cq_ci);
    if (!at.owned) return consumed;
    uint64_t start = 0;
    const uint64_t retired = retired_by<S>(qp, at.tail, &start);
    const bool failed = is_error_cqe(at.tail);
    if (!claim_cqe<S>(&qp.state->cq_ci, at.ci)) continue;
    retire_cqe<Ordering, S>(qp, at.cqe, failed, start, retired);
    ++consumed;
  }
}

// wait_completion for a QP one thread drives (Sharing::exclusive) on a CQ of its own. Nothing but
// this thread's polls moves cq_ci, cons_idx or the error word, so the wait keeps them in registers
// and a try is one round trip: the next CQE's last word (acquired) and, beside it, the ctrl segment
// of the oldest WQE not retired, the one a CQE most often names (every WQE signalled). That read
// may come before the CQE's acquire: this thread wrote the WQE (program order makes its own store
// visible to it), the NIC never writes the send queue, and the slot is not reused before this
// thread retires it. The shared form reloads the words and the consumer before every try; after the
// acquire of the try before (which empties L1) each is another round trip, and a CQE that arrives
// meanwhile waits for the next try. It returns at the CQE retiring `index` without looking at the
// slot after it. An error CQE ends it as before: the flushes available behind it are consumed
// (poll_cq) and cq_error returned.
template <typename Ordering>
DISSECT_HD inline Status wait_own_cq(const nic::QpHandle& qp, uint64_t index, uint64_t timeout_ns) {
  nic::SendQueueState* state = qp.state;
  if (state->error != 0) return Status::cq_error;
  uint64_t completed = state->cons_idx;
  uint64_t ci = state->cq_ci;
  BoundedWait wait(timeout_ns);
  while (completed < index) {
    note_poll<Ordering, Sharing::exclusive>(qp);
    const uint32_t oldest_ds = wqe_ds_at(qp, completed);
    const mlx5::mlx5_cqe64* cqe = &qp.send_cq.cqes[ci & (qp.send_cq.cqe_count - 1)];
    const CqeTail tail = read_cqe_tail<Ordering>(cqe);
    if (!mlx5::cqe_is_sw_owned(tail.op_own, ci, qp.send_cq.cqe_count)) {
      if (wait.expired()) {
        return report_timeout("completion", WaitOn::qp, qp.qpn, index, completed, wait.waited_ns());
      }
      continue;
    }
    // The WQE the CQE names lies at most a ring (2^15 WQEBBs) past the oldest not retired.
    const uint64_t start = completed + static_cast<uint16_t>(tail.wqe_counter - static_cast<uint16_t>(completed));
    const uint64_t retired = wqe_end(start, start == completed ? oldest_ds : wqe_ds_at(qp, start));
    const bool failed = is_error_cqe(tail);
    state->cq_ci = ++ci;
    if (failed) {
      retire_cqe<Ordering, Sharing::exclusive>(qp, cqe, failed, start, retired);
      poll_cq<Ordering, Sharing::exclusive>(qp);
      return Status::cq_error;
    }
    completed = retire_exclusive<Ordering>(qp, completed, retired);  // cons_idx from the register
  }
  return Status::ok;
}

// Waits until every WQEBB below `index` is retired. Returns cq_error as soon as the QP reports an
// error CQE, timeout (after printing the QP and the index) when `timeout_ns` passes.
template <typename Ordering, Sharing S>
DISSECT_HD inline Status wait_completion(const nic::QpHandle& qp, uint64_t index,
                                         uint64_t timeout_ns = DEFAULT_WAIT_TIMEOUT_NS) {
  if constexpr (S == Sharing::exclusive) {
    if (qp.send_cq.shared == nullptr) return wait_own_cq<Ordering>(qp, index, timeout_ns);
  }
  BoundedWait wait(timeout_ns);
  for (;;) {
    // Error first: an error CQE also advances cons_idx, and the WQEs it retired did not execute.
    if (counter_load<S>(&qp.state->error) != 0) return Status::cq_error;
    if (counter_load<S>(&qp.state->cons_idx) >= index) return Status::ok;
    if (poll_cq<Ordering, S>(qp) != 0) continue;
    if constexpr (S == Sharing::shared) {
      if (counter_load<S>(&qp.state->ready_head) > counter_load<S>(&qp.state->prod_idx)) {
        if (ring<Ordering, S>(qp) != Status::ok) return Status::timeout;
      }
    }
    if (wait.expired()) {
      return report_timeout("completion", WaitOn::qp, qp.qpn, index,
                            counter_load<S>(&qp.state->cons_idx), wait.waited_ns());
    }
  }
}

// Completes everything this QP has published. The last published WQE must be signalled.
template <typename Ordering, Sharing S>
DISSECT_HD inline Status quiet(const nic::QpHandle& qp,
                               uint64_t timeout_ns = DEFAULT_WAIT_TIMEOUT_NS) {
  return wait_completion<Ordering, S>(qp, counter_load<S>(&qp.state->ready_head), timeout_ns);
}

}  // namespace dissect::gda
