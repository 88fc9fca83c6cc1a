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
// other WQE, a QP without an answering responder, a DCI, or a timing profile: nothing happens and
// the express or staged window takes it.
#pragma once

#include <cstdint>

#include "express.h"

namespace dissect::softnic {

// lone_wqe's answer when it did nothing: the WQE is no lone-path WQE.
inline constexpr uint32_t NOT_LONE = 0x100;

// Executes the WQE at the consumer of `copy` (open, in RTS, exactly one WQEBB announced) in the
// calling lane; returns its syndrome (0: it succeeded), or NOT_LONE without a side effect.
//
// Ordering, one lane: the CQE body and the payload are this lane's plain stores, and
// publish_cqe's release store of the CQE's last word orders every earlier store of the lane
// before it (PTX: a release is a fence for the thread's prior writes), so a poller that acquires
// the last word and sees its owner bit sees the payload and the whole CQE; the lane needs no
// warp barrier, since no other lane wrote anything the CQE stands for. The body goes out before
// the payload so that the release waits for both at once (express.h, the same reason).
template <Scope Completion>
DISSECT_HD inline uint32_t lone_wqe(const Window& w, QpCopy& copy, QpContext& qp) {
  QpContext& v = copy.view;
  if (v.transport != QP_TRANSPORT_RC || copy.remote.responder == nullptr || w.profile.enabled) {
    return NOT_LONE;  // a DCI; no answering responder (the staged checks give the syndrome); pacing
  }
  ExpressWqe x;
  read_express_wqe(copy, 0, x);
  if (!x.joins) return NOT_LONE;
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
  if (x.plan.length != 0) {  // a WRITE that passed its checks (a failure's plan is empty)
    if (x.plan.source == nullptr) {
      store_inline(x);
    } else {
      copy_pointer(x.plan);
    }
  }
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
  return x.syndrome;
}

// The lone window of an open QP in RTS with exactly one WQEBB announced (serve_window): lane 0
// executes it while the other lanes wait at the result's broadcast. Served{0, 0} when it is no
// lone WQE (nothing happened). A lone window ends the visit (Served::lone): nothing else was
// announced when its doorbell was read, and a doorbell rung since is the next pass's news (the
// engine kernel's doorbell watch) rather than one more doorbell read, a round trip, here.
template <Scope Completion, typename Lanes>
DISSECT_HD inline Served serve_lone(const Lanes& lanes, Window& w, QpCopy& copy, QpContext& qp) {
  const uint32_t result = lanes.alone([&] { return lone_wqe<Completion>(w, copy, qp); });
  if (result == NOT_LONE) return Served{0, 0};
  Served s{1, static_cast<uint8_t>(result)};
  s.lone = 1;
  return s;
}

}  // namespace dissect::softnic
