// Submission: reserve WQEBBs, (build WQEs: gda/wqe.h), publish in reservation order, ring.
//
//   reserve  -> slots [base, base + n) are this thread's; waits (bounded) until the ring has room,
//               i.e. until cons_idx >= base + n - ring size, polling the CQ meanwhile.
//   publish  -> ready_head moves from base to base + n, in reservation order (shared QPs spin until
//               their predecessor has published; the acquire-release CAS carries this thread's WQE
//               stores to whichever thread rings next).
//   ring     -> dbrec = BE32(end & 0xffff), then the 8-byte doorbell, with the ordering policy's
//               fences; on shared QPs under post_lock, so doorbells never go backwards.
//
// A thread waiting for room or for a completion rings anything published but not yet rung
// (gda/doorbell.h): a predecessor that skipped its doorbell because a later reservation existed
// could otherwise leave it waiting forever.
#pragma once

#include <cstdint>

#include "dissect/common/atomic.h"
#include "dissect/common/clock.h"
#include "dissect/gda/completion.h"
#include "dissect/gda/doorbell.h"
#include "dissect/gda/status.h"
#include "dissect/mlx5/doorbell.h"
#include "dissect/nic/handles.h"

namespace dissect::gda {

// Whether the ring holds WQEBBs up to `end` once `completed` of them are consumed.
DISSECT_HD inline bool has_room(const nic::QpHandle& qp, uint64_t end, uint64_t completed) {
  return end <= qp.sq.wqebb_count || completed >= end - qp.sq.wqebb_count;
}

template <typename Ordering, Sharing S>
DISSECT_HD inline Status wait_for_room(const nic::QpHandle& qp, uint64_t end,
                                       uint64_t timeout_ns = DEFAULT_WAIT_TIMEOUT_NS) {
  if (end <= qp.sq.wqebb_count) return Status::ok;
  return wait_completion<Ordering, S>(qp, end - qp.sq.wqebb_count, timeout_ns);
}

// Reserves `wqebbs` consecutive WQEBBs; *base receives the first.
//
// Exclusive QPs read the counters they need before storing anything: the loads are independent,
// so they cost one memory round trip together rather than one each (a store to the ring may alias
// the state as far as the compiler knows, which would force each later load to wait for it).
//
// A reservation that times out waiting for room is returned, so the QP stays usable and a retry
// reserves the same WQEBBs: otherwise the next doorbell would announce WQEBBs nobody wrote, and
// the NIC would fail them (LOCAL_QP_OP_ERR). Always so on an exclusive QP (one reserver). On a
// shared QP only while no later reservation exists; once one does, the hole cannot be filled
// (the ring has no room for a NOP there) and the QP is unusable: later publishers time out behind
// it. The message printed then says so.
template <typename Ordering, Sharing S>
DISSECT_HD inline Status reserve(const nic::QpHandle& qp, uint32_t wqebbs, uint64_t* base,
                                 uint64_t timeout_ns = DEFAULT_WAIT_TIMEOUT_NS) {
  if constexpr (S == Sharing::exclusive) {
    nic::SendQueueState* state = qp.state;
    const uint64_t head = state->resv_head;
    const uint64_t completed = state->cons_idx;
    *base = head;
    state->resv_head = head + wqebbs;
    const uint64_t end = head + wqebbs;
    if (has_room(qp, end, completed)) return Status::ok;
    const Status room = wait_for_room<Ordering, S>(qp, end, timeout_ns);
    if (room == Status::timeout) state->resv_head = head;
    return room;
  } else {
    *base = fetch_add<Scope::gpu>(&qp.state->resv_head, uint64_t{wqebbs});
    const uint64_t end = *base + wqebbs;
    const Status room = wait_for_room<Ordering, S>(qp, end, timeout_ns);
    if (room == Status::timeout &&
        !compare_exchange<Scope::gpu>(&qp.state->resv_head, end, *base)) {
      report_wait_timeout("room, behind later reservations: this QP is now unusable", WaitOn::qp,
                          qp.qpn, end, load_relaxed<Scope::gpu>(&qp.state->cons_idx), timeout_ns);
    }
    return room;
  }
}

template <Sharing S>
DISSECT_HD inline Status publish(const nic::QpHandle& qp, uint64_t base, uint32_t wqebbs) {
  if constexpr (S == Sharing::exclusive) {
    qp.state->ready_head = base + wqebbs;
    return Status::ok;
  } else {
    BoundedWait wait;
    while (!compare_exchange<Scope::gpu>(&qp.state->ready_head, base, base + wqebbs)) {
      if (wait.expired()) {
        return report_timeout("publication of the predecessor's WQEs", WaitOn::qp, qp.qpn, base,
                              load_relaxed<Scope::gpu>(&qp.state->ready_head), wait.waited_ns());
      }
    }
    return Status::ok;
  }
}

// Publishes, then rings only if no later reservation exists: the later reserver's doorbell will
// cover these WQEs, so concurrent submitters share doorbells (NVSHMEM's rule (a), §2.4 of gda.md).
template <typename Ordering, Sharing S>
DISSECT_HD inline Status publish_and_ring(const nic::QpHandle& qp, uint64_t base, uint32_t wqebbs) {
  if constexpr (S == Sharing::exclusive) {
    // One submitter publishes and rings in order, so everything below `base` is already rung:
    // the doorbell covers exactly these WQEs, and nothing needs reading back.
    const uint64_t end = base + wqebbs;
    qp.state->ready_head = end;
    note_doorbell<Ordering>(qp, base, end);
    store_doorbell_pair<Ordering>(qp, end);
    qp.state->prod_idx = end;
    return Status::ok;
  }
  const Status published = publish<S>(qp, base, wqebbs);
  if (published != Status::ok) return published;
  if constexpr (S == Sharing::shared) {
    if (load_acquire<Scope::gpu>(&qp.state->resv_head) != base + wqebbs) return Status::ok;
  }
  return ring<Ordering, S>(qp);
}

}  // namespace dissect::gda
