// One visit of a parallel engine to one QP: windows (window.h) until the QP has no announced WQE
// or the budget is spent, read and written with the scopes its EngineFlags name.
#pragma once

#include <cstdint>

#include "dc_batch.h"
#include "express.h"
#include "lone.h"
#include "window.h"

namespace dissect::softnic {

// WQEs one QP may execute per visit, so one busy queue cannot starve the others of its engine lane.
inline constexpr uint32_t SERVICE_BUDGET = 64;
// The budget of a QP that has its engine warp to itself: no queue to be fair to, and a visit's
// first window is the only one that reads the QP's state (open_window, `checked`), so a long
// backlog runs in windows that begin with their WQEs. Bounded all the same: the warp's pass also
// reads the stop flag and the QP count.
inline constexpr uint32_t SOLE_QP_BUDGET = 256;

// The budget of a visit to a QP under profile `p` (profile.h, scheduling_quantum_wqes): a profile's
// scheduling quantum where it names one, so that a backlog does not decide how often a queue's
// context is looked up; `sole`: the QP has its engine lane to itself.
DISSECT_HD inline uint32_t visit_budget(const TimingProfile& p, bool sole) {
  if (sole) return SOLE_QP_BUDGET;
  return p.enabled != 0 && p.scheduling_quantum_wqes != 0 ? p.scheduling_quantum_wqes : SERVICE_BUDGET;
}

// Whether a QP with EngineFlags `flags` is served with these scopes (serve_qp's choice).
template <Scope Doorbell, Scope Completion>
DISSECT_HD inline bool serves_scopes(uint32_t flags) {
  if ((flags & ENGINE_QUEUES_IN_HOST_MEMORY) != 0) {
    return Doorbell == Scope::system && Completion == Scope::system;
  }
  const Scope completion = (flags & ENGINE_SYSTEM_COMPLETION) != 0 ? Scope::system : Scope::gpu;
  return Doorbell == Scope::gpu && Completion == completion;
}

// The staged window out of line: the express window is the common one, and the two inlined
// together made the engine kernel spill (ptxas, sm_90: 255 registers, 512 B).
template <Scope Completion, typename Lanes>
DISSECT_HD DISSECT_COLD Served serve_staged_window_out_of_line(const Lanes& lanes, Window& w,
                                                               QpContext& qp, const NicTables& local) {
  return serve_staged_window<Completion>(lanes, w, qp, local);
}

// Executes one window of `qp`'s announced WQEs with `lanes` (lanes.h): the parallel engines' unit
// of work. One WQEBB announced: the lone window when its WQE allows (lone.h, the latency case);
// else the express window when its WQEs allow (express.h), else the staged one (window.h).
// `Doorbell`: the scope of the doorbell's submitters; `Completion`: of the CQE's and the payload's
// observers (EngineFlags).
template <Scope Doorbell, Scope Completion, typename Lanes>
DISSECT_HD inline Served serve_window(const Lanes& lanes, Window& w, QpContext& qp,
                                      const NicTables& local, QpCopy* cache, bool checked = false) {
  DISSECT_PHASE_START;
  // A held lone WQE (in_flight.h) first: its CQE precedes every later one of the warp's. Then the
  // held windows whose dates have come (held_windows.h): the loop's pass may be long in coming.
  settle_in_flight(lanes, w);
  release_due_held_windows(lanes, w);
  DISSECT_PHASE(26);
  open_window<Doorbell>(lanes, w, qp, cache, local, checked);
  if (w.state == QP_STATE_RESET || w.available == 0) return Served{0, 0};
  // open_window's copy (w.copy), named from the Window: through w.copy its fields are generic
  // loads (window_copy says why that matters).
  QpCopy& copy = window_copy(w, cache);
#if defined(__CUDA_ARCH__)
  // serve_qp chose the scopes from the copy it had; a copy refreshed since (the QP connected
  // anew) may name others: nothing is served now, the next visit takes them.
  if (!serves_scopes<Doorbell, Completion>(copy.view.engine_flags)) {
    Served later{0, 0};
    later.pending = 1;
    return later;
  }
#endif
  // Every window below but the express one waits in place: what the warp holds goes first.
  if (w.state != QP_STATE_RTS) {
    settle_held_windows(lanes, w);
    return serve_alone(lanes, qp, local);  // flushes
  }
  // A DCI's WRITEs (dc_batch.h): the DC lone window under `fast`, else a DC batch, one modelled
  // wait for up to 32.
  if (copy.view.transport == QP_TRANSPORT_DCI) {
    settle_held_windows(lanes, w);
    if (w.available <= 2) {
      const Served lone = serve_dc_lone<Completion>(lanes, w, copy, qp, local);
      if (lone.executed != 0) return lone;
    }
    return serve_dc_batch_out_of_line<Completion>(lanes, w, qp, local);
  }
  // A full ring of held windows (held_windows.h): the WQEs wait in the send queue until its oldest
  // window leaves; the engine loop comes back (pending) and releases it at its dates.
  if (held_windows_full(lanes, w)) {
    Served later{0, 0};
    later.pending = 1;
    return later;
  }
  // The lone window holds its WQE apart from the held windows: only with none held (else an express
  // window of one holds it behind them).
  if (w.available == 1 && holds_no_window(lanes, w)) {
    DISSECT_PHASE(27);
    const Served lone = serve_lone<Completion>(lanes, w, copy, qp);
    DISSECT_PHASE(28);
    if (lone.executed != 0) return lone;
  }
  const Served express = serve_express<Completion>(lanes, w, copy, qp);
  if (express.executed != 0) return express;
  settle_held_windows(lanes, w);
  return serve_staged_window_out_of_line<Completion>(lanes, w, qp, local);
}

// A window of a QP whose queues are in host memory or whose completions are observed beyond the
// engine's GPU: out of line, so that the common window (GPU-resident queues, GPU-scope completion)
// is the one inlined into the engine loop and its code stays one compact stretch. The engine warp
// is bound by instruction fetch (docs/softnic-engine.md): with all three scope pairs inlined, a
// window's code was spread over 260 KB.
template <Scope Doorbell, Scope Completion, typename Lanes>
DISSECT_HD DISSECT_COLD Served serve_window_elsewhere(const Lanes& lanes, Window& w, QpContext& qp,
                                                      const NicTables& local, QpCopy* cache,
                                                      bool checked) {
  return serve_window<Doorbell, Completion>(lanes, w, qp, local, cache, checked);
}

// Whether a visit to `qp` (not in RESET) would find work, by the engine's own record of it and
// `doorbell`, the value its doorbell word holds now: a value the engine has not acted on, or
// WQEs announced and not consumed (a visit that spent its budget, a window that waited for its
// scopes or the held windows: Served::pending). A visit's windows keep the record in the
// QpContext (apply_doorbell, retire_window), so the test needs no state of its own: the GPU
// engine's sweep of the QPs its doorbell watch does not cover (gpu_kernel.cu).
DISSECT_HD inline bool has_news(const QpContext& qp, uint64_t doorbell) {
  return doorbell != qp.last_doorbell || qp.sq_target > qp.sq_consumer;
}

// `cache`: the warp's QpCopy slot for this QP, or null.
template <typename Lanes>
DISSECT_HD inline Served serve_qp(const Lanes& lanes, Window& w, QpContext& qp,
                                  const NicTables& local, QpCopy* cache,
                                  uint32_t budget = SERVICE_BUDGET) {
  Served total{0, 0};
#if defined(__CUDA_ARCH__)
  // The scopes from the warp's copy of the QP when it has one: an L2 read of the QpContext here
  // came before the doorbell's, one more round trip in every poll (serve_window checks them).
  const bool held = cache != nullptr && cache->qp == &qp;
  const uint32_t flags = held ? cache->view.engine_flags : qp.engine_flags;
  const bool host_queues = (flags & ENGINE_QUEUES_IN_HOST_MEMORY) != 0;
  const bool system_completion = (flags & ENGINE_SYSTEM_COMPLETION) != 0;
#endif
  for (;;) {
    if (total.executed >= budget) {
      total.pending = 1;  // maybe more announced: the doorbell watch must not wait for a doorbell
      break;
    }
    // A window that executed found the copy holding (open_window): the visit's later ones may
    // trust it.
    const bool checked = total.executed != 0;
    Served s;
#if defined(__CUDA_ARCH__)
    if (host_queues) {
      s = serve_window_elsewhere<Scope::system, Scope::system>(lanes, w, qp, local, cache, checked);
    } else if (system_completion) {
      s = serve_window_elsewhere<Scope::gpu, Scope::system>(lanes, w, qp, local, cache, checked);
    } else {
      s = serve_window<Scope::gpu, Scope::gpu>(lanes, w, qp, local, cache, checked);
    }
#else
    s = serve_window<Scope::system, Scope::system>(lanes, w, qp, local, cache, checked);
#endif
    DISSECT_PHASE_START;
    if (s.executed == 0) {
      total.pending = s.pending;
      break;
    }
    total.executed += s.executed;
    if (s.syndrome != 0) total.syndrome = s.syndrome;
    if (s.lone) {
      DISSECT_PHASE(29);
      break;  // nothing else was announced: no second doorbell read (lone.h)
    }
  }
  return total;
}

}  // namespace dissect::softnic
