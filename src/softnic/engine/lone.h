// The lone WQE: a window (window.h) whose doorbells announced exactly one WQEBB past the consumer,
// i.e. the latency case (one put, one doorbell, the submitter waiting for its CQE). One lane
// executes it from its registers, start to end: read the WQEBB (and the guessed key contexts
// beside it), check it, write the CQE body, store the payload, publish the CQE, retire. No warp
// barrier, ballot, shuffle, reduction or shared-memory WQE table between the doorbell and the CQE:
// a lone warp pays ~3.3 cycles per dependent instruction (docs/results/h200/engine/
// window_profile.md), and a one-WQE express window spent most of its instructions on the warp's
// bookkeeping for 31 idle lanes.
//
// The WQEs it takes are the express window's (one WQEBB: a NOP, or an RDMA WRITE with an inline
// payload or one data segment under WARP_COPY_BYTES, source and destination apart), checked by the
// same code (read_express_wqe, check_write_target) with the same CQE (requester_cqe,
// write_cqe_body) and retirement (retire_window): the outcome is that of execute_and_retire. Any
// other WQE, a QP without an answering responder, or a DCI: nothing happens and the express or
// staged window takes it.
//
// Under a timing profile the lone WQE is held (in_flight.h, hold_lone_wqe): read and checked as
// under `fast`, its dates computed by pace_payloads as for a window of one (the ring date plus the
// doorbell's latency, the pipe, the responder's receive processing), its CQE written but for its
// stamp and last word; its payload, CQE and requester lookup follow at their dates, released in
// place when the CQE's date is near (release_now: the engine loop would come back to it late), else
// by the engine loop (release_in_flight), the warp watching the doorbells meanwhile; the WQE is
// retired after an in-place release, or at the hold when the loop releases it. Before, a profile
// sent it through the staged window, whose own work took 4.6 us, longer than cx7-ib's 3.3 us it
// was to overlap (docs/softnic-engine.md, "The paced lone window", "The held lone WQE").
#pragma once

#include <cstdint>
#if !defined(__CUDA_ARCH__)
#include <cstring>
#endif

#include "express.h"

namespace dissect::softnic {

// lone_wqe's answer when it did nothing: the WQE is no lone-path WQE.
inline constexpr uint32_t NOT_LONE = 0x100;

// The inline payload words from word FIRST of `word` on into `f` (registers to shared memory, at
// constant indices: no local array).
template <uint32_t FIRST, uint32_t N>
DISSECT_HD inline void hold_inline_words(InFlight& f, const uint32_t (&word)[N], uint64_t length) {
  constexpr uint32_t WORDS = N - FIRST < IN_FLIGHT_INLINE_BYTES / 4 ? N - FIRST : IN_FLIGHT_INLINE_BYTES / 4;
  DISSECT_UNROLL
  for (uint32_t k = 0; k < WORDS; ++k) {
    if (4 * k < length) f.bytes[k] = word[FIRST + k];
  }
}

// The CQE half of a hold: the CQE reserved, built from the QP's copy `v` as it stands now (the QP's
// next doorbell may change the copy first) and its body written into its slot, so that its release
// is its stamp and one release store (stamp_cqe, publish_cqe). The body may be written early: the
// poller takes a slot by its last word's owner bit, which only the release stores. The stamp written
// here is provisional; the release writes the one the CQE leaves with.
DISSECT_HD inline void hold_cqe(InFlight& f, const QpContext& v, bool wants_cqe, const WqeOutcome& outcome,
                                bool system) {
  f.entry = nullptr;
  if (wants_cqe) {
    // One writer: a collapsed CQ needs no election (newest_collapsed_writer), a shared CQ one add.
    const uint64_t index = reserve_cqes(v.send_cq, 1);
    mlx5::mlx5_cqe64 cqe;
    const uint8_t cqe_opcode = requester_cqe(v, v.sq_consumer, outcome, &cqe, now_ns(), CQE_PATH_LONE);
    f.entry = cqe_entry(v.send_cq, index);
    f.cqe_tail = write_cqe_body(f.entry, v.send_cq, index, cqe, cqe_opcode);
  }
  f.doorbell_rung_ns = v.doorbell_rung_ns;
  f.doorbell_seen_ns = v.doorbell_seen_ns;
  f.qpn = v.qpn;
  f.system = system ? 1 : 0;
}

DISSECT_HD inline void store_held_payload(const InFlight& f) {
  const WritePlan& plan = f.plan;
  if (plan.length == 0) return;
  if (plan.source != nullptr) {
    copy_pointer(plan);
    return;
  }
  store_payload_words(plan.destination, plan.length, f.bytes);
}

// The held WQE's CQE, its date come: stamped and released (`Completion`: its observers' scope).
template <Scope Completion>
DISSECT_HD inline void publish_held_cqe(const InFlight& f) {
  stamp_cqe(f.entry, now_ns(), f.doorbell_rung_ns, f.doorbell_seen_ns);
  publish_cqe<Completion>(f.entry, f.cqe_tail);
#if defined(__CUDA_ARCH__) && defined(DISSECT_ENGINE_PHASES)
  atomicAdd(&engine_phase_cycles[20], static_cast<unsigned long long>(now_ns() - f.cqe_ns));
#endif
}

// The requester's context lookup a held WQE makes after its CQE (in_flight.h), then nothing is
// held. Out of line: dependent round trips, and only under a profile with the connection model.
DISSECT_HD inline DISSECT_COLD void look_up_held(Window& w) {
  InFlight& f = w.in_flight;
  if (f.lookup == IN_FLIGHT_RC_LOOKUP) {
    charge_connection_state(w, f.qpn);
  } else if (f.lookup == IN_FLIGHT_DC_LOOKUP) {
    dc_charge_send_lookup(*f.local, w.qp_cache, f.qpn, f.copy_destination, *f.target, f.dctn);
    *f.qp_destination = *f.copy_destination;
  }
  f.lookup = IN_FLIGHT_NO_LOOKUP;
}

// The held WQE's steps (in_flight.h) whose dates have come or come within IN_FLIGHT_SPIN_NS,
// spinning to each date; every step with `settle`. The payload, then the CQE's release, which
// orders the payload's stores before it (one lane: publish_cqe's release covers its own earlier
// stores), then the requester's lookup. One lane (or one host thread).
DISSECT_HD inline DISSECT_COLD void release_in_flight(Window& w, bool settle) {
  InFlight& f = w.in_flight;
#if defined(__CUDA_ARCH__) && defined(DISSECT_ENGINE_PHASES)
  if (!settle && f.held_ns != 0) {  // 33: from the hold to the loop's first release step
    atomicAdd(&engine_phase_cycles[33], static_cast<unsigned long long>(now_ns() - f.held_ns));
    f.held_ns = 0;
  }
#endif
  if (f.stage == IN_FLIGHT_PAYLOAD) {
    if (!settle && f.data_ns > now_ns() + IN_FLIGHT_SPIN_NS) return;
    wait_until(f.data_ns);
    store_held_payload(f);
    f.stage = IN_FLIGHT_CQE;
  }
  if (f.stage != IN_FLIGHT_CQE) return;
  if (f.entry != nullptr) {
    if (!settle && f.cqe_ns > now_ns() + IN_FLIGHT_SPIN_NS) return;
    wait_until(f.cqe_ns);
    if (f.system != 0) {
      publish_held_cqe<Scope::system>(f);
    } else {
      publish_held_cqe<Scope::gpu>(f);
    }
  }
  if (f.lookup != IN_FLIGHT_NO_LOOKUP) look_up_held(w);
  f.stage = IN_FLIGHT_NONE;
}

// A WQE just held, released where it was held (release_now: a Window that does not hold, or dates
// too near for the loop): inline, where the out-of-line release_in_flight's call and return cost
// cx7-ib put+completion ~0.3 us (H100, 2026-12-06: 5.19-5.22 us out of line, 4.84-4.94 inline).
// Now that the CQE is built at the hold this is a payload, a stamp and one release store, and the
// 64-QP fast ceiling kept its rate (1,015 against 1,018 M msg/s, same call), which the whole
// release inlined had not (953 against 1,011).
template <Scope Completion>
DISSECT_HD inline void release_in_place(Window& w) {
  InFlight& f = w.in_flight;
  wait_until(f.data_ns);
  store_held_payload(f);
  if (f.entry != nullptr) {
    wait_until(f.cqe_ns);
    publish_held_cqe<Completion>(f);
  }
  if (f.lookup != IN_FLIGHT_NO_LOOKUP) look_up_held(w);
  f.stage = IN_FLIGHT_NONE;
}

// Releases a held WQE whatever its dates: before any other window of the warp (serve_window), so
// that its CQE precedes theirs, and when the engine stops.
template <typename Lanes>
DISSECT_HD inline void settle_in_flight(const Lanes& lanes, Window& w) {
  if (paced(lanes, w) && w.in_flight.stage != IN_FLIGHT_NONE) lanes.leader([&] { release_in_flight(w, true); });
}

// The engine loop's step each pass: what of the held WQE is due.
template <typename Lanes>
DISSECT_HD inline void release_due_in_flight(const Lanes& lanes, Window& w) {
  if (paced(lanes, w) && w.in_flight.stage != IN_FLIGHT_NONE) lanes.leader([&] { release_in_flight(w, false); });
}

// Retires the lone WQE `x` (retire_window) and keeps its keys for the next window's guess.
DISSECT_HD inline void retire_lone(QpContext& qp, QpCopy& copy, const ExpressWqe& x, bool wants_cqe) {
  WindowTally tally{};
  tally.executed = 1;
  tally.cqes = wants_cqe ? 1 : 0;
  tally.writes = x.syndrome == 0 && x.opcode == mlx5::MLX5_OPCODE_RDMA_WRITE ? 1 : 0;
  tally.bytes = x.plan.length;
  tally.failed = x.syndrome != 0;
  retire_window(qp, copy.view, copy.remote.responder, tally, 1);
  if (x.rkey != 0 && x.syndrome == 0) {  // the next window's guess (QpCopy::last_rkey)
    copy.last_rkey = x.rkey;
    if (x.lkey != 0) copy.last_lkey = x.lkey;
  }
}

// Whether the WQE just held is released before the lone window returns, as a window waits in
// place: a Window that does not hold (w.holds 0), or dates too near for the engine loop to come
// back to them in time (IN_FLIGHT_HOLD_MIN_NS).
DISSECT_HD inline bool release_now(const Window& w) {
  return w.holds == 0 || w.in_flight.cqe_ns < now_ns() + IN_FLIGHT_HOLD_MIN_NS;
}

// The hold of a new WQE: an earlier one still held (a caller that serves lone windows without
// serve_window's settle first) is released first, whatever its dates.
DISSECT_HD inline InFlight& begin_hold(Window& w) {
  if (w.in_flight.stage != IN_FLIGHT_NONE) release_in_flight(w, true);
  return w.in_flight;
}

// A paced lone WQE, read and checked (`x`), held (in_flight.h): its CQE written but for its stamp
// and last word (hold_cqe), its dates from pace_payloads as a window of one (a failed WQE moves
// nothing); the payload, the CQE's release and the requester's lookup wait for release_in_flight,
// before this returns when release_now says so (a Window that does not hold, or dates too near);
// the WQE is retired after that.
template <Scope Completion>
DISSECT_HD inline uint32_t hold_lone_wqe(Window& w, QpCopy& copy, QpContext& qp, const ExpressWqe& x) {
  QpContext& v = copy.view;
  InFlight& f = begin_hold(w);
  const bool moves = x.syndrome == 0;
  const bool reads_source = moves && x.opcode == mlx5::MLX5_OPCODE_RDMA_WRITE && x.plan.source != nullptr;
  f.plan = x.plan;
  if (x.plan.source == nullptr) hold_inline_words<(2 * mlx5::MLX5_SEND_WQE_DS + 4) / 4>(f, x.word, x.plan.length);
  const bool wants_cqe = x.signaled != 0 || x.syndrome != 0;
  hold_cqe(f, v, wants_cqe, WqeOutcome{x.syndrome, x.opcode, x.signaled != 0, 1, x.plan.length},
           Completion == Scope::system);
  f.data_ns = pace_payloads(w, v, moves ? 1 : 0, x.plan.length, reads_source, false);
  f.cqe_ns = cqe_release_ns(w.profile, f.data_ns);
  f.lookup = moves && w.profile.qp_cache_entries != 0 ? IN_FLIGHT_RC_LOOKUP : IN_FLIGHT_NO_LOOKUP;
  f.stage = IN_FLIGHT_PAYLOAD;
#if defined(__CUDA_ARCH__) && defined(DISSECT_ENGINE_PHASES)
  const uint64_t held_at = now_ns();  // 19: how late the hold came, 25: how early
  f.held_ns = held_at;
  if (held_at > f.data_ns) atomicAdd(&engine_phase_cycles[19], static_cast<unsigned long long>(held_at - f.data_ns));
  if (held_at < f.data_ns) atomicAdd(&engine_phase_cycles[25], static_cast<unsigned long long>(f.data_ns - held_at));
#endif
  // Released in place before the retirement: its counters are relaxed adds, which the CQE's release
  // would otherwise wait for (a fast lone WQE retires after its CQE too).
  if (release_now(w)) release_in_place<Completion>(w);
  retire_lone(qp, copy, x, wants_cqe);
  return x.syndrome;
}

// Executes the WQE at the consumer of `copy` (open, in RTS, exactly one WQEBB announced) in the
// calling lane; returns its syndrome (0: it succeeded), or NOT_LONE without a side effect.
// `Paced`: w.profile is enabled, and the WQE waits for its dates (hold_lone_wqe). Inlined into the
// engine loop, each into the kernel of its pacing (engine_kernel<P>; the host engine has both):
// out of line, the paced one's call and return cost ~1,500 cycles a WQE (phase counters, H200).
//
// Ordering, one lane: the CQE body and the payload are this lane's plain stores, and
// publish_cqe's release store of the CQE's last word orders every earlier store of the lane
// before it (PTX: a release is a fence for the thread's prior writes), so a poller that acquires
// the last word and sees its owner bit sees the payload and the whole CQE; the lane needs no
// warp barrier, since no other lane wrote anything the CQE stands for. The body goes out before
// the payload so that the release waits for both at once (express.h, the same reason).
template <Scope Completion, bool Paced>
DISSECT_HD inline uint32_t lone_wqe(Window& w, QpCopy& copy, QpContext& qp) {
  QpContext& v = copy.view;
  if (v.transport != QP_TRANSPORT_RC || copy.remote.responder == nullptr ||
      (w.profile.enabled != 0) != Paced) {
    return NOT_LONE;  // a DCI; no answering responder (the staged checks give the syndrome)
  }
  DISSECT_PHASE_START;
  ExpressWqe x;
  read_express_wqe(copy, 0, x);
  if (!x.joins) return NOT_LONE;
  DISSECT_PHASE(12);
  if (Paced) {
    const uint32_t syndrome = hold_lone_wqe<Completion>(w, copy, qp, x);
    DISSECT_PHASE(13);
#if defined(__CUDA_ARCH__) && defined(DISSECT_ENGINE_PHASES)
    atomicAdd(&engine_phase_cycles[15], 1ull);
#endif
    return syndrome;
  }
  const bool wants_cqe = x.signaled != 0 || x.syndrome != 0;
  mlx5::mlx5_cqe64* entry = nullptr;
  uint32_t tail = 0;
  if (wants_cqe) {
    // One writer: a collapsed CQ needs no election (newest_collapsed_writer), a shared CQ one add.
    const uint64_t index = reserve_cqes(v.send_cq, 1);
    const WqeOutcome outcome{x.syndrome, x.opcode, x.signaled != 0, 1, x.plan.length};
    mlx5::mlx5_cqe64 cqe;
    const uint8_t cqe_opcode = requester_cqe(v, v.sq_consumer, outcome, &cqe, now_ns(), CQE_PATH_LONE);
    entry = cqe_entry(v.send_cq, index);
    tail = write_cqe_body(entry, v.send_cq, index, cqe, cqe_opcode);
  }
  DISSECT_PHASE(13);
  store_payload(x);
  if (entry != nullptr) publish_cqe<Completion>(entry, tail);
  retire_lone(qp, copy, x, wants_cqe);
  DISSECT_PHASE(14);
#if defined(__CUDA_ARCH__) && defined(DISSECT_ENGINE_PHASES)
  atomicAdd(&engine_phase_cycles[15], 1ull);
#endif
  return x.syndrome;
}

// The lone window of an open QP in RTS with exactly one WQEBB announced (serve_window): lane 0
// executes it while the other lanes wait at the result's broadcast. Served{0, 0} when it is no
// lone WQE (nothing happened). A lone window ends the visit (Served::lone): nothing else was
// announced when its doorbell was read, and a doorbell rung since is the next pass's news (the
// engine kernel's doorbell watch) rather than one more doorbell read, a round trip, here.
template <Scope Completion, typename Lanes>
DISSECT_HD inline Served serve_lone(const Lanes& lanes, Window& w, QpCopy& copy, QpContext& qp) {
  const uint32_t result = lanes.alone([&] {
    return paced(lanes, w) ? lone_wqe<Completion, true>(w, copy, qp)
                           : lone_wqe<Completion, false>(w, copy, qp);
  });
  if (result == NOT_LONE) return Served{0, 0};
  Served s{1, static_cast<uint8_t>(result)};
  s.lone = 1;
  return s;
}

}  // namespace dissect::softnic
