// The express window: a window (window.h) whose WQEs are all one WQEBB, RDMA WRITEs with an
// inline payload or one data segment under WARP_COPY_BYTES, and NOPs: every 8 B put, every
// small one-segment write, i.e. what the latency and message-rate experiments post. Lane k reads
// WQEBB consumer + k into its registers and carries WQE k through every phase there: no stage in
// shared memory, no chain, no warp barrier between a lane's own phases, the inline payload stored
// from the registers it was read into, the CQE built in the lane that writes it. The outcome is
// the staged window's, i.e. that of executing the WQEs one at a time (execute.h): the same checks
// (check_write_target), CQEs (requester_cqe, write_cqe_at), ordering and retirement
// (retire_window). A window with any other WQE goes through the stage (serve_staged_window).
//
// Why it exists: a lone engine warp pays ~3.3 cycles per dependent instruction, and the staged
// window's generic bookkeeping (stage, chain, shared-memory WQE table, five ballots) was most of
// a one-WQE window's ~8,800 cycles (docs/results/h200/engine/window_profile.md).
#pragma once

#include <cstdint>
#if !defined(__CUDA_ARCH__)
#include <cstring>
#endif

#include "held_windows.h"
#include "window.h"

namespace dissect::softnic {

// WQE k of an express window, in lane k.
struct ExpressWqe {
  uint32_t word[16];  // the WQEBB as read from the send queue
  WritePlan plan;     // a WRITE that passed its checks; length 0 otherwise
  uint8_t opcode;
  uint8_t syndrome;   // 0 = passed its checks
  uint8_t signaled;
  uint8_t joins;      // the WQE may be in an express window
  uint32_t lkey;      // a WRITE's keys (0: none), for the QP's next guess (QpCopy::last_rkey)
  uint32_t rkey;
  mlx5::mlx5_cqe64* cqe;  // the CQE this lane publishes (its body written), or null
  uint32_t cqe_tail;      // its last word
};

DISSECT_HD inline void read_wqebb(const QpContext& v, uint64_t index, uint32_t (&word)[16]) {
#if defined(__CUDA_ARCH__)
  // Four 16 B loads in flight at once: one round trip. In asm (load_16), because ptxas sinks plain
  // loads to their first use: it issued the ctrl segment's third word and the raddr segment only after the
  // ctrl checks, three round trips a WQE (cuobjdump -sass of engine_kernel, sm_90). Weak loads:
  // the doorbell that announced the WQE was acquired (open_window), and the slot is not reused
  // before this WQE's CQE.
  const uint8_t* in = v.sq.wqebb(index);
  DISSECT_UNROLL
  for (int k = 0; k < 4; ++k) load_16<true>(in + 16 * k, &word[4 * k]);
#else
  std::memcpy(word, v.sq.wqebb(index), sizeof word);
#endif
}

// The WQEBB a window later, into L1, when a doorbell already acquired announced it: the next
// window of a backlog reads nothing before its WQEBBs (open_window), and finds them there instead
// of one L2 round trip away. Only announced slots: their bytes were complete before the doorbell
// that announced them, whose acquire came before this prefetch; nothing in a backlog's windows
// empties L1 until the next acquire (publish_cqe's release store does not).
DISSECT_HD inline void prefetch_next_wqebb(const QpContext& v, uint64_t index) {
#if defined(__CUDA_ARCH__)
  const uint64_t next = index + WINDOW_LANES;
  if (next < v.sq_target) asm volatile("prefetch.global.L1 [%0];" : : "l"(v.sq.wqebb(next)));
#else
  (void)v;
  (void)index;
#endif
}

// Segment `ds` of WQEBB words read at once (one WQEBB: 16 words; a DC WQE of two: 32).
template <typename Segment, size_t N>
DISSECT_HD inline Segment segment_of(const uint32_t (&word)[N], uint32_t ds) {
  Segment s;
  __builtin_memcpy(&s, &word[4 * ds], sizeof s);
  return s;
}

// The inline byte count word's value (MLX5_INLINE_SEG set for an inline payload).
DISSECT_HD inline uint32_t payload_word(const uint32_t (&word)[16]) {
  return segment_of<mlx5::mlx5_wqe_inl_data_seg>(word, 2).byte_count.value();
}

// Reads and checks WQE `k` of the window: whether it joins an express window (window_wqe_size's
// rules, one WQEBB, a lane-sized payload) and, for a WRITE, check_write's checks.
DISSECT_HD inline void read_express_wqe(const QpCopy& c, uint32_t k, ExpressWqe& x) {
  using namespace mlx5;
  const QpContext& v = c.view;
  const RemoteSide& remote = c.remote;
  const MrTable responder_mrs = mr_table(*remote.nic);
  const uint64_t start = v.sq_consumer + k;
  read_wqebb(v, start, x.word);
  prefetch_next_wqebb(v, start);
  // The contexts of the keys the QP's last window named, in flight beside the WQEBB: the keys
  // are in the WQEBB, so reading theirs after it is a second round trip. Read after the doorbell
  // was acquired, these are as fresh as the reads they stand in for.
  const MrEntry guessed_rkey = load_mr<true>(responder_mrs, c.last_rkey, v.remote_window);
  const MrEntry guessed_lkey = c.last_lkey != 0 ? load_mr<true>(c.local_mrs, c.last_lkey) : MrEntry{};
  const mlx5_wqe_ctrl_seg ctrl = segment_of<mlx5_wqe_ctrl_seg>(x.word, 0);
  const uint32_t ds = ctrl_ds(ctrl);
  x.opcode = ctrl_opcode(ctrl);
  x.signaled = ctrl_signaled(ctrl);
  x.syndrome = 0;
  x.plan = WritePlan{};
  x.lkey = 0;
  x.rkey = 0;
  x.joins = ctrl_wqe_index(ctrl) == static_cast<uint16_t>(start) && ctrl_qpn(ctrl) == v.qpn &&
            ds != 0 && wqebbs_for_ds(ds) == 1;
  if (!x.joins || x.opcode == MLX5_OPCODE_NOP) return;
  if (x.opcode != MLX5_OPCODE_RDMA_WRITE || ds < 3) {
    x.joins = false;
    return;
  }
  const uint32_t count = payload_word(x.word);
  const bool is_inline = (count & MLX5_INLINE_SEG) != 0;
  if (!is_inline && (ds != 3 || count >= WARP_COPY_BYTES)) {
    x.joins = false;  // a gather, or a payload the staged window copies warp-wide
    return;
  }
  // check_write_to's checks, for the two layouts that fit one WQEBB (the responder's PD is in
  // the copy).
  const mlx5_wqe_raddr_seg raddr = segment_of<mlx5_wqe_raddr_seg>(x.word, 1);
  const mlx5_wqe_data_seg data = segment_of<mlx5_wqe_data_seg>(x.word, 2);
  const uint64_t length = count & ~MLX5_INLINE_SEG;
  x.rkey = raddr.rkey.value();
  x.lkey = is_inline ? 0 : data.lkey.value();
  MrEntry lkey_entry{};
  if (!is_inline) {
    lkey_entry = x.lkey == c.last_lkey ? guessed_lkey : load_mr(c.local_mrs, x.lkey);
  }
  const MrEntry rkey_entry =
      x.rkey == c.last_rkey ? guessed_rkey : load_mr(responder_mrs, x.rkey, v.remote_window);
  const WriteTarget target{remote.nic, c.responder_pd, v.remote_window};
  if (is_inline && 2 + inline_ds(static_cast<uint32_t>(length)) > ds) {
    x.syndrome = MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
    return;
  }
  if (!is_inline && !entry_allows(mr_holds(lkey_entry, x.lkey), lkey_entry, v.pd, data.addr.value(), count, 0)) {
    x.syndrome = MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
    return;
  }
  const uint8_t* source = is_inline ? nullptr : reinterpret_cast<const uint8_t*>(data.addr.value());
  x.syndrome = check_write_target(target, raddr.raddr.value(), mr_holds(rkey_entry, x.rkey), rkey_entry,
                                  source, length, 2, &x.plan);
  if (x.syndrome != 0) {
    x.plan = WritePlan{};
  } else if (overlaps(x.plan)) {
    x.joins = false;  // source and destination overlap: copy_bytes, in the staged window
  } else {
    x.plan.responder = remote.responder;
  }
}

// The express window makes no call while its lanes hold their WQEs: under the CUDA ABI a value
// live across a call to an out-of-line function is saved to local memory, and the engine's
// out-of-line functions are large (ptxas, sm_90: the express window inlined beside a call to
// copy_unaliased spilled the engine kernel 368 B). So its copies are inline, sized for the lane
// payloads it takes (at most 28 B inline, under WARP_COPY_BYTES by pointer).

// An inline payload from the registers it was read into (bytes 36.. of the WQEBB): 4 B stores
// where the destination and length allow, else byte stores.
DISSECT_HD inline void store_inline(const ExpressWqe& x) {
  uint8_t* out = x.plan.destination;
  const uint64_t length = x.plan.length;
  constexpr uint32_t FIRST = (2 * mlx5::MLX5_SEND_WQE_DS + 4) / 4;  // word 9
#if defined(__CUDA_ARCH__)
  constexpr uint32_t WORDS = 16 - FIRST;
  if (((reinterpret_cast<uintptr_t>(out) | length) & 3) == 0) {
    DISSECT_UNROLL
    for (uint32_t k = 0; k < WORDS; ++k) {
      if (4 * k < length) reinterpret_cast<uint32_t*>(out)[k] = x.word[FIRST + k];
    }
    return;
  }
  DISSECT_UNROLL
  for (uint32_t k = 0; k < 4 * WORDS; ++k) {
    if (k < length) out[k] = static_cast<uint8_t>(x.word[FIRST + k / 4] >> (8 * (k % 4)));
  }
#else
  std::memcpy(out, reinterpret_cast<const uint8_t*>(x.word) + 4 * FIRST, length);
#endif
}

// The payload of an express WQE: a WRITE that passed its checks (a failure's plan is empty) from
// its inline bytes or its source; nothing for the rest.
DISSECT_HD inline void store_payload(const ExpressWqe& x) {
  if (x.plan.length == 0) return;
  if (x.plan.source == nullptr) {
    store_inline(x);
  } else {
    copy_pointer(x.plan);
  }
}

// The CQE body of the WQE `offset` WQEBBs past the consumer, CQE number `index`, written into its
// slot (e.cqe, e.cqe_tail: what publish_cqe releases; e.cqe stays null where a collapsed CQ's newer
// CQE of the window takes the one entry).
DISSECT_HD inline void write_express_cqe(const QpContext& v, ExpressWqe& e, uint32_t offset, uint64_t index,
                                         uint64_t stamp) {
#if defined(__CUDA_ARCH__)
  if (v.send_cq.collapsed && !newest_collapsed_writer(v.send_cq, index)) return;
#endif
  const WqeOutcome outcome{e.syndrome, e.opcode, e.signaled != 0, 1, e.plan.length};
  mlx5::mlx5_cqe64 cqe;
  const uint8_t cqe_opcode = requester_cqe(v, v.sq_consumer + offset, outcome, &cqe, stamp, CQE_PATH_EXPRESS);
  e.cqe = cqe_entry(v.send_cq, index);
  e.cqe_tail = write_cqe_body(e.cqe, v.send_cq, index, cqe, cqe_opcode);
}

// The payloads and CQEs of a paced express window (its CQE bodies written, their stamps
// provisional): its dates from pace_payloads (the pipe, the doorbell's latency, the connection
// state), then held (held_windows.h) when the Window has a ring and holds (the host engine's
// loop), so that it serves the next window meanwhile; else moved and released at their dates in
// place. Only Lanes that hold windows come here (lanes.h, HOLDS_WINDOWS). Each CQE leaves stamped
// (stamp_cqe) with its release's time.
template <Scope Completion, typename Lanes>
DISSECT_HD inline void pace_express_window(const Lanes& lanes, Window& w, const QpContext& v,
                                           const ExpressWqe (&x)[Lanes::SLOTS], uint32_t moved,
                                           uint32_t executed, uint64_t bytes) {
  const bool pointers =
      lanes.ballot(moved, [&](uint32_t k) { return x[lanes.slot(k)].plan.source != nullptr; }) != 0;
  constexpr uint32_t FIRST_INLINE_WORD = (2 * mlx5::MLX5_SEND_WQE_DS + 4) / 4;
  if (w.holds != 0 && w.held != nullptr) {
    const uint32_t at = next_held_window(lanes, w);
    lanes.mine(executed, [&](uint32_t k) {
      const ExpressWqe& e = x[lanes.slot(k)];
      hold_wqe<FIRST_INLINE_WORD>(w.held->wqe[at][k], e.plan, e.word, e.cqe, e.cqe_tail);
    });
    lanes.leader([&] {
      close_held_window(w, at, v, pace_payloads(w, v, moved, bytes, pointers), executed,
                        Completion == Scope::system);
    });
    release_due_held_windows(lanes, w);  // dates already near: spun to now rather than a pass on
    return;
  }
  uint64_t data_ns = 0;  // the leader's
  lanes.leader([&] {
    data_ns = pace_payloads(w, v, moved, bytes, pointers);
    wait_until(data_ns);
  });
  lanes.mine(moved, [&](uint32_t k) { store_payload(x[lanes.slot(k)]); });
  // The barrier before the leader's wait orders every lane's payload before every CQE's release.
  lanes.leader([&] { wait_until(cqe_release_ns(w.profile, data_ns)); });
  lanes.mine(executed, [&](uint32_t k) {
    const ExpressWqe& e = x[lanes.slot(k)];
    if (e.cqe == nullptr) return;
    stamp_cqe(e.cqe, now_ns(), v.doorbell_rung_ns, v.doorbell_seen_ns);
    publish_cqe<Completion>(e.cqe, e.cqe_tail);
  });
}

// The WQEBBs one express pass may take from a backlog: windows of 32 back to back under one head
// and one retirement (serve_express).
inline constexpr uint32_t EXPRESS_RUN = 4 * WINDOW_LANES;

// Executes the window of `copy` (w.copy, opened by open_window, in RTS) when every announced WQEBB the
// window can hold starts a WQE that joins; returns Served{0, 0} without a side effect otherwise.
// Unpaced, a window that moved all 32 WQEs is followed in the same pass by the next 32 announced,
// up to EXPRESS_RUN, while they join too: one QP's backlog then pays the head (open_window), the
// visit's step and the retirement's counters once per run, not per window (one engine warp serves
// one QP, so that work bounded one QP's rate: nic-ceiling, 1 QP, 17.1 M msg/s on the H100). A window
// of the run starts after the previous one's CQEs were released (the warp barrier before them), so
// the run keeps the order of windows executed one after the other.
template <Scope Completion, typename Lanes>
DISSECT_HD inline Served serve_express(const Lanes& lanes, Window& w, QpCopy& copy, QpContext& qp) {
  DISSECT_PHASE_START;
  QpContext& v = copy.view;
  const RemoteSide remote = copy.remote;
  if (v.transport != QP_TRANSPORT_RC || remote.responder == nullptr) return Served{0, 0};
  // A paced window that is not held waits for its dates through calls (pace_payloads): the staged
  // window's.
  if (!Lanes::HOLDS_WINDOWS && paced(lanes, w)) return Served{0, 0};
  WindowTally tally{};
  uint8_t syndrome = 0;
  uint32_t rkey = 0, lkey = 0;  // the leader's: WQE 0's keys, the next window's guess (QpCopy::last_rkey)
  uint32_t offset = 0;          // WQEBBs the run executed
#pragma unroll 1
  for (;;) {
    const uint32_t left = w.available - offset;
    const uint32_t probe = left < WINDOW_LANES ? left : WINDOW_LANES;
    ExpressWqe x[Lanes::SLOTS];
    lanes.mine(probe, [&](uint32_t k) { read_express_wqe(copy, offset + k, x[lanes.slot(k)]); });
    const uint32_t joining = lanes.ballot(probe, [&](uint32_t k) { return x[lanes.slot(k)].joins != 0; });
    if (joining != lanes_below(probe)) break;
    DISSECT_PHASE(1);

    const uint32_t count = lanes.disjoint_prefix(probe, [&](uint32_t k) {
      const WritePlan& p = x[lanes.slot(k)].plan;
      const uint64_t begin = reinterpret_cast<uintptr_t>(p.destination);
      return ByteRange{begin, begin + p.length};
    });
    const uint32_t failures = lanes.ballot(count, [&](uint32_t k) { return x[lanes.slot(k)].syndrome != 0; });
    const uint32_t moved = failures ? lowest_set_bit(failures) : count;
    const uint32_t executed = failures ? moved + 1 : count;
    const uint64_t bytes = lanes.sum(moved, [&](uint32_t k) { return x[lanes.slot(k)].plan.length; });
    DISSECT_PHASE(4);
    // The CQE bodies go out beside the payloads and one release per CQE lane covers both: the body
    // is unread until its last word publishes it (write_cqe_at), and a fence waits for every store
    // before it, so bodies stored after the payloads cost that fence a round trip more (H200).
    const uint32_t cqe_mask = lanes.ballot(executed, [&](uint32_t k) {
      return x[lanes.slot(k)].signaled != 0 || x[lanes.slot(k)].syndrome != 0;
    });
    const uint64_t stamp = cqe_mask != 0 ? now_ns() : 0;  // one clock read for the window's CQEs
    // A QP's own CQ counter advances at the run's retirement: the run's earlier CQEs come first.
    const uint64_t first_cqe = reserve_window_cqes(lanes, v.send_cq, popcount(cqe_mask)) +
                               (v.send_cq.shared_produced == nullptr ? tally.cqes : 0);
    lanes.mine(executed, [&](uint32_t k) {
      ExpressWqe& e = x[lanes.slot(k)];
      e.cqe = nullptr;
      if ((cqe_mask >> k) & 1) {
        write_express_cqe(v, e, offset + k, first_cqe + popcount(cqe_mask & lanes_below(k)), stamp);
      }
    });
    bool paced_here = false;
    if constexpr (Lanes::HOLDS_WINDOWS) {  // the GPU kernels instantiate none of it (held_windows.h)
      paced_here = paced(lanes, w);
      if (paced_here) pace_express_window<Completion>(lanes, w, v, x, moved, executed, bytes);
    }
    if (!paced_here) {
      lanes.mine(moved, [&](uint32_t k) { store_payload(x[lanes.slot(k)]); });
      // Every lane's CQE release below covers every lane's payload (publish_cqe: cumulativity).
      lanes.sync();
      DISSECT_PHASE(5);
      lanes.mine(executed, [&](uint32_t k) {
        const ExpressWqe& e = x[lanes.slot(k)];
        if (e.cqe != nullptr) publish_cqe<Completion>(e.cqe, e.cqe_tail);
      });
    }
    DISSECT_PHASE(6);
    tally.executed += executed;
    tally.cqes += popcount(cqe_mask);
    tally.writes += popcount(lanes.ballot(moved, [&](uint32_t k) {
      return x[lanes.slot(k)].opcode == mlx5::MLX5_OPCODE_RDMA_WRITE;
    }));
    tally.bytes += bytes;
    tally.failed = failures != 0;
    if (failures) syndrome = static_cast<uint8_t>(lanes.pick(moved, [&](uint32_t k) { return x[lanes.slot(k)].syndrome; }));
    if (offset == 0 && x[lanes.slot(0)].syndrome == 0) {  // the leader's own WQE 0: no shuffle
      rkey = x[lanes.slot(0)].rkey;
      lkey = x[lanes.slot(0)].lkey;
    }
    offset += executed;
    if (failures || executed != WINDOW_LANES || paced_here || offset + WINDOW_LANES > w.available ||
        offset >= EXPRESS_RUN) {
      break;
    }
    lanes.sync();  // every lane's CQE released before the next window's bodies (a collapsed CQ's entry)
  }
  if (offset == 0) return Served{0, 0};
  lanes.leader([&] {
    w.count = offset;
    tally.announced = w.available;
    retire_window(qp, v, remote.responder, tally, offset);
    if (rkey != 0) {
      copy.last_rkey = rkey;
      if (lkey != 0) copy.last_lkey = lkey;
    }
  });
  DISSECT_PHASE(7);
  return Served{offset, syndrome};
}

}  // namespace dissect::softnic
