// One visit of a parallel engine to one QP: windows (window.h) until the QP has no announced WQE
// or the budget is spent, read and written with the scopes its EngineFlags name.
#pragma once

#include <cstdint>

#include "window.h"

namespace dissect::softnic {

// WQEs one QP may execute per visit, so one busy queue cannot starve the others of its engine lane.
inline constexpr uint32_t SERVICE_BUDGET = 64;

// `cache`: the warp's QpCopy slot for this QP, or null.
template <typename Lanes>
DISSECT_HD inline Served serve_qp(const Lanes& lanes, Window& w, QpContext& qp,
                                  const NicTables& local, QpCopy* cache,
                                  uint32_t budget = SERVICE_BUDGET) {
  Served total{0, 0};
#if defined(__CUDA_ARCH__)
  const uint32_t flags = qp.engine_flags;
  const bool host_queues = (flags & ENGINE_QUEUES_IN_HOST_MEMORY) != 0;
  const bool system_completion = (flags & ENGINE_SYSTEM_COMPLETION) != 0;
#endif
  while (total.executed < budget) {
    Served s;
#if defined(__CUDA_ARCH__)
    if (host_queues) {
      s = serve_window<Scope::system, Scope::system>(lanes, w, qp, local, cache);
    } else if (system_completion) {
      s = serve_window<Scope::gpu, Scope::system>(lanes, w, qp, local, cache);
    } else {
      s = serve_window<Scope::gpu, Scope::gpu>(lanes, w, qp, local, cache);
    }
#else
    s = serve_window<Scope::system, Scope::system>(lanes, w, qp, local, cache);
#endif
    if (s.executed == 0) break;
    total.executed += s.executed;
    if (s.syndrome != 0) total.syndrome = s.syndrome;
  }
  return total;
}

}  // namespace dissect::softnic
