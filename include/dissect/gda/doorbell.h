// Ringing: the doorbell record, then the 8-byte doorbell, with the ordering policy's fences.
// On shared QPs under post_lock, so that doorbells never announce a smaller index than an earlier
// one and prod_idx only grows.
#pragma once

#include <cstdint>

#include "dissect/common/atomic.h"
#include "dissect/gda/ordering.h"
#include "dissect/gda/sharing.h"
#include "dissect/gda/status.h"
#include "dissect/mlx5/doorbell.h"
#include "dissect/nic/handles.h"

namespace dissect::gda {

template <typename Ordering>
DISSECT_HD inline void store_doorbell_pair(const nic::QpHandle& qp, uint64_t end) {
  Ordering::store_dbrec(&qp.dbrec_send->raw, mlx5::dbrec_value(end).raw);
  Ordering::store_doorbell(qp.doorbell, mlx5::doorbell_value(end, qp.qpn));
}

template <Sharing S>
DISSECT_HD inline Status acquire_post_lock(const nic::QpHandle& qp) {
  BoundedWait wait;
  while (!compare_exchange<Scope::gpu>(&qp.state->post_lock, 0u, 1u)) {
    if (wait.expired()) {
      return report_timeout("the post lock", WaitOn::qp, qp.qpn, 0, 0, wait.waited_ns());
    }
  }
  return Status::ok;
}

// Announces every published WQEBB to the NIC.
template <typename Ordering, Sharing S>
DISSECT_HD inline Status ring(const nic::QpHandle& qp) {
  nic::SendQueueState* state = qp.state;
  if constexpr (S == Sharing::exclusive) {
    if (state->ready_head > state->prod_idx) {
      note_doorbell<Ordering>(qp, state->prod_idx, state->ready_head);
      store_doorbell_pair<Ordering>(qp, state->ready_head);
      state->prod_idx = state->ready_head;
    }
    return Status::ok;
  } else {
    if (acquire_post_lock<S>(qp) != Status::ok) return Status::timeout;
    const uint64_t end = load_acquire<Scope::gpu>(&state->ready_head);
    const uint64_t rung = load_relaxed<Scope::gpu>(&state->prod_idx);
    if (end > rung) {
      note_doorbell<Ordering>(qp, rung, end);
      store_doorbell_pair<Ordering>(qp, end);
      store_release<Scope::gpu>(&state->prod_idx, end);
    }
    store_release<Scope::gpu>(&state->post_lock, 0u);
    return Status::ok;
  }
}

}  // namespace dissect::gda
