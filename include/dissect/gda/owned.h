// A QP owned by one thread, its submission counters kept in registers: the paper's minimal issue
// path (§4.1), in which nothing is read from memory between the request and the doorbell.
//
//   OwnedQp q = own(handle);          // reads the counters once, outside any timed path
//   put<Ordering>(q, ...);            // reserve from registers -> build -> ring; stores nothing else
//   wait_completion<Ordering>(q, end) // writes the counters back, then as for a handle; also tells
//                                     // the registers what retired
//   disown(q);                        // writes the counters back: the handle may be used again
//
// The memory copy of the counters (SendQueueState resv_head, ready_head, prod_idx) is written only
// where something reads it: before every wait (poll_cq widens each CQE's 16-bit wqe_counter
// against prod_idx) and at disown(), as proxy::OwnedRing writes its head back. A put stores the
// WQE, the dbrec and the doorbell and nothing more. Only an exclusive QP can be owned: the
// registers are a private copy, and no other thread may move resv_head behind the owner's back.
//
// Why it matters: on an H200, reserving through SendQueueState costs one or two dependent L2
// round trips (resv_head, then cons_idx once the ring has wrapped) before the first WQE store.
#pragma once

#include <cstdint>

#include "dissect/gda/completion.h"
#include "dissect/gda/doorbell.h"
#include "dissect/gda/sharing.h"
#include "dissect/gda/status.h"
#include "dissect/nic/handles.h"

namespace dissect::gda {

struct OwnedQp {
  nic::QpHandle qp;
  uint64_t head;       // resv_head == ready_head == prod_idx: one owner reserves, publishes, rings
  uint64_t completed;  // a lower bound of cons_idx; re-read only when it says the ring is full
};

// Takes the QP over; no other thread may submit to it while the OwnedQp is in use.
DISSECT_HD inline OwnedQp own(const nic::QpHandle& qp) {
  return OwnedQp{qp, qp.state->resv_head, qp.state->cons_idx};
}

// Brings SendQueueState up to the registers: everything reserved is published and rung.
DISSECT_HD inline void disown(const OwnedQp& queue) {
  nic::SendQueueState* state = queue.qp.state;
  state->resv_head = queue.head;
  state->ready_head = queue.head;
  state->prod_idx = queue.head;
}

DISSECT_HD inline const nic::QpHandle& handle_of(const nic::QpHandle& qp) { return qp; }
DISSECT_HD inline const nic::QpHandle& handle_of(const OwnedQp& queue) { return queue.qp; }

// A timeout reserves nothing (the head moves only on success): a retry reserves the same WQEBBs.
template <typename Ordering, Sharing S>
DISSECT_HD inline Status reserve(OwnedQp& queue, uint32_t wqebbs, uint64_t* base,
                                 uint64_t timeout_ns = DEFAULT_WAIT_TIMEOUT_NS) {
  static_assert(S == Sharing::exclusive, "only an exclusive QP can be owned by one thread");
  const uint64_t end = queue.head + wqebbs;
  const uint64_t size = queue.qp.sq.wqebb_count;
  if (end > queue.completed + size) {
    queue.completed = queue.qp.state->cons_idx;  // the poller may have retired more since
    if (end > queue.completed + size) {
      disown(queue);  // the wait polls the CQ, which reads prod_idx
      const Status room = wait_completion<Ordering, S>(queue.qp, end - size, timeout_ns);
      if (room != Status::ok) return room;
      queue.completed = end - size;
    }
  }
  *base = queue.head;
  queue.head = end;
  return Status::ok;
}

template <typename Ordering, Sharing S>
DISSECT_HD inline Status publish_and_ring(OwnedQp& queue, uint64_t base, uint32_t wqebbs) {
  const uint64_t end = base + wqebbs;
  note_doorbell<Ordering>(queue.qp, base, end);
  store_doorbell_pair<Ordering>(queue.qp, end);
  return Status::ok;
}

template <typename Ordering, Sharing S = Sharing::exclusive>
DISSECT_HD inline Status wait_completion(OwnedQp& queue, uint64_t index,
                                         uint64_t timeout_ns = DEFAULT_WAIT_TIMEOUT_NS) {
  disown(queue);
  const Status done = wait_completion<Ordering, S>(queue.qp, index, timeout_ns);
  if (done == Status::ok && index > queue.completed) queue.completed = index;
  return done;
}

// Completes everything the owner has posted. The last WQE posted must be signalled.
template <typename Ordering, Sharing S = Sharing::exclusive>
DISSECT_HD inline Status quiet(OwnedQp& queue, uint64_t timeout_ns = DEFAULT_WAIT_TIMEOUT_NS) {
  return wait_completion<Ordering, S>(queue, queue.head, timeout_ns);
}

}  // namespace dissect::gda
