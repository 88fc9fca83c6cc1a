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
// Under a timing profile the lone WQE is paced as finish_window paces a window of one
// (pace_payloads: the doorbell's latency from its ring date, the pipe, the responder's receive
// processing), in an out-of-line instantiation so that the fast path's code and registers stay as
// they are; its requester's context lookup follows its CQE (charge_connection_state: a miss
// delays the NIC's later messages, the lookup's round trips not this one). Before, a profile sent
// it through the staged window, whose own work (its atomics, the stage) took 4.6 us on the H200,
// longer than cx7-ib's 3.3 us it was to overlap (docs/softnic-engine.md, "The paced lone window").
#pragma once

#include <cstdint>

#include "express.h"

namespace dissect::softnic {

// lone_wqe's answer when it did nothing: the WQE is no lone-path WQE.
inline constexpr uint32_t NOT_LONE = 0x100;

// Executes the WQE at the consumer of `copy` (open, in RTS, exactly one WQEBB announced) in the
// calling lane; returns its syndrome (0: it succeeded), or NOT_LONE without a side effect.
// `Paced`: w.profile is enabled, and the payload and the CQE wait for it (pace_payloads).
//
// Ordering, one lane: the CQE body and the payload are this lane's plain stores, and
// publish_cqe's release store of the CQE's last word orders every earlier store of the lane
// before it (PTX: a release is a fence for the thread's prior writes), so a poller that acquires
// the last word and sees its owner bit sees the payload and the whole CQE; the lane needs no
// warp barrier, since no other lane wrote anything the CQE stands for. Under `fast` the body goes
// out before the payload so that the release waits for both at once (express.h, the same reason);
// paced, the body waits for its stamp, data_to_cqe after the payload may move.
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
    // finish_window's arguments for a window of this one WQE: a failed WQE moves nothing.
    const bool moves = x.syndrome == 0;
    const bool reads_source = moves && x.opcode == mlx5::MLX5_OPCODE_RDMA_WRITE && x.plan.source != nullptr;
    const uint64_t ready = pace_payloads(w, v, moves ? 1 : 0, x.plan.length, reads_source, false);
    DISSECT_PHASE_START;
    store_payload(x);
    wait_until(cqe_release_ns(w.profile, ready));
    DISSECT_PHASE(20);
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
  if (!Paced) store_payload(x);
  if (entry != nullptr) publish_cqe<Completion>(entry, tail);
  WindowTally tally{};
  tally.executed = 1;
  tally.cqes = wants_cqe ? 1 : 0;
  tally.writes = x.syndrome == 0 && x.opcode == mlx5::MLX5_OPCODE_RDMA_WRITE ? 1 : 0;
  tally.bytes = x.plan.length;
  tally.failed = x.syndrome != 0;
  retire_window(qp, v, copy.remote.responder, tally, 1);
  if (x.rkey != 0 && x.syndrome == 0) {  // the next window's guess (QpCopy::last_rkey)
    copy.last_rkey = x.rkey;
    if (x.lkey != 0) copy.last_lkey = x.lkey;
  }
  if (Paced && x.syndrome == 0) charge_connection_state(w, v);  // after the CQE (window.h)
  DISSECT_PHASE(14);
#if defined(__CUDA_ARCH__) && defined(DISSECT_ENGINE_PHASES)
  atomicAdd(&engine_phase_cycles[15], 1ull);
#endif
  return x.syndrome;
}

// The paced instantiation out of line: the engine warp is bound by instruction fetch, and the
// pacing's calls with the WQE live would otherwise grow the fast path's registers.
template <Scope Completion>
DISSECT_HD DISSECT_COLD uint32_t lone_wqe_paced(Window& w, QpCopy& copy, QpContext& qp) {
  return lone_wqe<Completion, true>(w, copy, qp);
}

// The lone window of an open QP in RTS with exactly one WQEBB announced (serve_window): lane 0
// executes it while the other lanes wait at the result's broadcast. Served{0, 0} when it is no
// lone WQE (nothing happened). A lone window ends the visit (Served::lone): nothing else was
// announced when its doorbell was read, and a doorbell rung since is the next pass's news (the
// engine kernel's doorbell watch) rather than one more doorbell read, a round trip, here.
template <Scope Completion, typename Lanes>
DISSECT_HD inline Served serve_lone(const Lanes& lanes, Window& w, QpCopy& copy, QpContext& qp) {
  const uint32_t result = lanes.alone([&] {
    return w.profile.enabled != 0 ? lone_wqe_paced<Completion>(w, copy, qp)
                                  : lone_wqe<Completion, false>(w, copy, qp);
  });
  if (result == NOT_LONE) return Served{0, 0};
  Served s{1, static_cast<uint8_t>(result)};
  s.lone = 1;
  return s;
}

}  // namespace dissect::softnic
