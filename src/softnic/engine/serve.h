// One visit of a parallel engine to one QP: windows (window.h) until the QP has no announced WQE
// or the budget is spent, read and written with the scopes its EngineFlags name.
#pragma once

#include <cstdint>

#include "window.h"

namespace dissect::softnic {

// WQEs one QP may execute per visit, so one busy queue cannot starve the others of its engine lane.
inline constexpr uint32_t SERVICE_BUDGET = 64;

// A window of a QP whose queues are in host memory or whose completions are observed beyond the
// engine's GPU: out of line, so that the common window (GPU-resident queues, GPU-scope completion)
// is the one inlined into the engine loop and its code stays one compact stretch. The engine warp
// is bound by instruction fetch (docs/softnic-engine.md): with all three scope pairs inlined, a
// window's code was spread over 260 KB.
template <Scope Doorbell, Scope Completion, typename Lanes>
DISSECT_HD DISSECT_COLD Served serve_window_elsewhere(const Lanes& lanes, Window& w, QpContext& qp,
                                                      const NicTables& local, QpCopy* cache) {
  return serve_window<Doorbell, Completion>(lanes, w, qp, local, cache);
}

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
      s = serve_window_elsewhere<Scope::system, Scope::system>(lanes, w, qp, local, cache);
    } else if (system_completion) {
      s = serve_window_elsewhere<Scope::gpu, Scope::system>(lanes, w, qp, local, cache);
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
