// Completion scope (paper §4.1, Figure 4): what one wait covers. Per QP: wait_completion() and
// quiet() of gda/completion.h. Per peer: every QP towards one PE. All: every QP the PE configured,
// as NVSHMEM's PE-wide nvshmem_quiet() does. A wider scope pays one check per QP even where
// nothing is outstanding (its error word, cons_idx and ready_head), which is Figure 4's growth.
#pragma once

#include <cstdint>

#include "dissect/gda/completion.h"
#include "dissect/nic/handles.h"

namespace dissect::gda {

// QPs in memory the waiting thread reads (GPU memory for a GPU thread): `count` handles.
struct QpSet {
  const nic::QpHandle* qps;
  uint32_t count;
};

// The QPs towards `peer` when each peer has `qps_per_peer` consecutive ones.
DISSECT_HD inline QpSet peer_qps(const QpSet& all, uint32_t peer, uint32_t qps_per_peer) {
  return QpSet{all.qps + uint64_t{peer} * qps_per_peer, qps_per_peer};
}

// One thread completes everything published on every QP of `set` (the last WQE published on
// each must be signalled). Returns the first failure, naming its QP as quiet() does.
template <typename Ordering, Sharing S>
DISSECT_HD inline Status quiet(const QpSet& set, uint64_t timeout_ns = DEFAULT_WAIT_TIMEOUT_NS) {
  for (uint32_t i = 0; i < set.count; ++i) {
    const Status s = quiet<Ordering, S>(set.qps[i], timeout_ns);
    if (s != Status::ok) return s;
  }
  return Status::ok;
}

// The same with the lanes of a warp (gda/warp.h) splitting the QPs: lane i checks QPs i, i + 32,
// ..., so 32 QPs cost about one check. Every lane returns ok when every QP completed, and
// otherwise the largest Status value a lane met.
template <typename Ordering, Sharing S, typename Lanes>
DISSECT_HD inline Status quiet(const Lanes& lanes, const QpSet& set,
                               uint64_t timeout_ns = DEFAULT_WAIT_TIMEOUT_NS) {
  uint32_t worst = 0;
  for (uint32_t i = lanes.first(); i < set.count; i += lanes.step) {
    const Status s = quiet<Ordering, S>(set.qps[i], timeout_ns);
    if (static_cast<uint32_t>(s) > worst) worst = static_cast<uint32_t>(s);
  }
  return static_cast<Status>(lanes.max(worst));
}

}  // namespace dissect::gda
