// How a parallel engine executes up to 32 WQEs of one QP at once, one per lane of a warp, with the
// outcome of executing them one at a time (execute.h stays the one definition of what a WQE does):
// WQEs execute in order and exactly once, CQEs appear in WQE order, no CQE is visible before the
// payloads of every WQE up to it, and after a failed WQE nothing later moves a byte.
//
// The window holds the WQEs that may run side by side: RDMA WRITEs with one data segment or an
// inline payload, and NOPs, each announced in full by a doorbell. It ends before any other WQE (a
// WRITE WITH IMM consumes the responder's receive WQEs in order, an atomic returns an ordered
// result, a gather has several segments); when such a WQE is first, it runs alone through
// execute_and_retire, as does every WQE of a QP in the error state (a flush). Phases, with a warp
// barrier between them:
//   1. inspect  lane i stages WQEBB consumer + i: does a window WQE start there? A one-WQEBB WQE
//               preceded only by one-WQEBB WQEs is WQE i: its lane checks it (3) in this pass
//   2. chain    WQE 0 starts at the consumer, WQE k + 1 at start_k + wqebbs_k (uniform)
//   3. check    lane k validates WQE k (keys, bounds, permissions, size) without moving a byte
//               (only the WQEs past the first multi-WQEBB one are left for this pass)
//   4. perform  the WQEs before the first failure move their payloads (large ones warp-wide)
//   5. complete lanes write the CQEs of signalled WQEs and of the failure, each in the slot of its
//               rank; the lane-0 leader retires the window (consumer, CQ producer, counters, state)
// On the host one thread runs each phase for every lane in turn (HostLanes), so the CPU tier drives
// exactly this code.
#pragma once

#include <cstdint>
#if !defined(__CUDA_ARCH__)
#include <cstring>
#endif

#include "connection_state.h"
#include "execute.h"
#include "in_flight.h"
#include "lanes.h"
#include "pipe.h"

namespace dissect::softnic {

inline constexpr uint32_t WINDOW_LANES = 32;
// A payload this large is copied by the whole warp, 16 B per lane per step, instead of by its lane.
inline constexpr uint64_t WARP_COPY_BYTES = 256;

struct WindowWqe {
  WritePlan plan;     // valid when the WQE is a WRITE that passed its checks
  uint32_t offset;    // WQEBBs from the consumer index to this WQE
  uint8_t wqebbs;
  uint8_t opcode;
  uint8_t syndrome;   // 0 = passed its checks
  uint8_t signaled;
};

// A warp's copy of one of the QPs it serves, kept across windows so that a window reads its QP,
// its responder's table header and its own progress from shared memory instead of a chain of L2
// round trips (measured on the H200 with -DDISSECT_ENGINE_PHASES: about 1,000 cycles each). The
// engine is the only writer of a connected QP's progress (consumer, target, last doorbell, CQ
// producer), so the copy is the truth for them and the QpContext receives every change (plain
// stores, for the host and for execute_and_retire); counters go to the QpContext alone (relaxed
// atomic adds, never read back here). The copy is trusted while the QP is in RTS, its connection
// fields are the ones it was made with and its responder is in RTS; all three are re-read every
// window, beside the doorbell.
struct QpCopy {
  QpContext* qp;            // the QpContext copied; null: empty
  QpContext view;           // the copy
  union {
    NicTables remote_tables;  // RC: the responder's NIC table header (its mrs, capacities)
    // A DCI (no responder of its own): the destination its last WQE resolved (execute.h
    // DcRoute), so that a WQE to the same DCT reads no fabric entry, DCT count or NIC header.
    // Empty in a fresh copy (open_window).
    DcRoute dc_route;
  };
  RemoteSide remote;        // nic -> remote_tables; responder: null when none answered
  uint32_t responder_pd;    // remote.responder->pd: fixed for the responder's life
  MrTable local_mrs;        // the engine NIC's memory keys (the doorbell's acquire empties L1)
  // The keys the QP's last express window named (lane 0's WQE): the next window reads their
  // contexts beside its WQEBBs and uses them when its WQEs name the same keys, as a stream of
  // writes from one buffer to one peer buffer does, one round trip instead of two (express.h).
  uint32_t last_lkey;       // 0: none yet
  uint32_t last_rkey;
};
inline constexpr uint32_t CACHED_QPS = 4;  // per warp: a warp serving more copies the rest anew

// When a doorbell was rung, as the engine dates it (docs/softnic-engine.md, "When a doorbell was
// rung"). An engine reads each QP's doorbell once a pass (the GPU engine's watch for a warp's first
// 32 QPs, else the visit's first window; the host engine: the visit), so a doorbell value its read
// sees for the first time was rung after the last read that saw an older one, and that read came
// after the start of its pass. The engine loop sets these before each visit; a Window nobody sets
// (pass_ns 0: a test driving serve_qp, a drain outside the loop) dates a doorbell when it is seen.
struct DoorbellClock {
  uint64_t pass_ns;  // the start of this pass, before its first doorbell read; 0: no clock kept
};

// The ring date of a doorbell first seen by a read of this pass: the pass's start. The ring lies
// after the previous pass's read of the old value and before the read that saw it, which followed
// pass_ns; a profile must never release a CQE before the ring plus its latencies, so the date is
// that interval's late end: late by whatever of the previous pass followed the ring, early by at
// most the one load between pass_ns and the read. The early end (the previous pass's start) was
// the first rule: under a profile a pass holds a window's modelled wait, and the H200 dated rings
// 7.0 us before the doorbell with it (cx7-ib, 2026-12-03), which would have released CQEs that
// much before the model allows had the engine been faster than the profile. 0 without a clock.
DISSECT_HD inline uint64_t ring_date(const DoorbellClock& c) { return c.pass_ns; }

struct HeldWindows;  // held_windows.h

// One warp's scratch (shared memory on the GPU).
struct Window {
  // The announced WQEBBs at the consumer, copied at once (WQEBB j in slot j % 32): every later
  // phase reads the WQEs from here, not through L2 again.
  alignas(16) uint8_t stage[WINDOW_LANES * mlx5::MLX5_SEND_WQE_BB];
  QpCopy cache[CACHED_QPS];
  QpCopy scratch;                   // for a QP past the cache
  uint8_t wqebbs_at[WINDOW_LANES];  // phase 1: size of the window WQE starting at offset i, 0 = none
  WindowWqe wqe[WINDOW_LANES];      // phase 3 on
  QpCopy* copy;                     // the copy this window works on
  TimingProfile profile;            // the NIC's (use_profile, when the engine starts)
  PipeRates rates;                  // pipe_rates(profile)
  uint64_t* pipe;                   // the NIC's NicTables::pipe_busy_until
  NicTables* nic;                   // the NIC's tables (the connection-state model's cache)
  // nic->qp_cache, read when the engine starts (fixed for the NIC's life): a lone window's lookup
  // after its CQE reads no table header first, one L2 round trip less before the next doorbell.
  uint32_t* qp_cache;
  uint32_t count;                   // WQEs in the window
  uint32_t available;               // announced WQEBBs past the consumer (leader)
  uint32_t state;
  DoorbellClock clock;              // set by the engine loop each pass (leader)
  // A paced lone WQE whose payload and CQE wait for their dates (in_flight.h). `holds` 1: an
  // engine loop releases it (release_due_in_flight); 0 (a test driving serve_qp, a drain): the
  // lone window releases it before it returns, as a window waits in place.
  InFlight in_flight;
  uint32_t holds;
  // The warp's ring of paced express windows in flight (held_windows.h); null: none is held, a
  // paced window waits for its dates in place.
  HeldWindows* held;
  DISSECT_HD mlx5::send_ring staged() const {
    return mlx5::send_ring{const_cast<uint8_t*>(stage), WINDOW_LANES};
  }
};

// Gives the Window the NIC's timing profile and the pipe's rates from it.
DISSECT_HD inline void use_profile(Window& w, const TimingProfile& p) {
  w.profile = p;
  w.rates = pipe_rates(p);
}

// Whether the windows of `lanes` are paced (a timing profile is enabled): the NIC's profile, or a
// constant where the engine kernel was built for one case (Pacing, lanes.h), whose callers then
// compile only the branch they take.
template <typename Lanes>
DISSECT_HD inline bool paced(const Lanes&, const Window& w) {
  if constexpr (Lanes::PACING == Pacing::never) return false;
  if constexpr (Lanes::PACING == Pacing::always) return true;
  return w.profile.enabled != 0;
}

// Phase 1 for the WQEBB at `offset`: the size of the WQE starting there if it can join a window.
DISSECT_HD inline uint8_t window_wqe_size(const QpContext& qp, const mlx5::send_ring& staged,
                                          uint32_t offset, uint32_t available) {
  using namespace mlx5;
  // A DCI's WQEs each name their own responder in an address vector (execute_dc_write): the
  // window's checks assume one connected responder and the RC segment layout, so none of a DCI's
  // WQEs enters a window; serve_alone runs them one at a time through execute_and_retire.
  if (qp.transport != QP_TRANSPORT_RC) return 0;
  const uint64_t start = qp.sq_consumer + offset;
  const mlx5_wqe_ctrl_seg ctrl = *reinterpret_cast<const mlx5_wqe_ctrl_seg*>(staged.wqebb(start));
  const uint32_t ds = ctrl_ds(ctrl);
  if (ctrl_wqe_index(ctrl) != static_cast<uint16_t>(start) || ctrl_qpn(ctrl) != qp.qpn || ds == 0) {
    return 0;  // not a WQE start: execute_wqe gives it its syndrome when it is first
  }
  const uint32_t wqebbs = wqebbs_for_ds(ds);
  if (offset + wqebbs > available) return 0;  // not announced in full
  if (offset + wqebbs > WINDOW_LANES) return 0;  // not staged in full
  const uint8_t opcode = ctrl_opcode(ctrl);
  if (opcode == MLX5_OPCODE_NOP) return static_cast<uint8_t>(wqebbs);
  if (opcode != MLX5_OPCODE_RDMA_WRITE || ds < 3) return 0;
  const auto* data = reinterpret_cast<const mlx5_wqe_data_seg*>(staged.segment(start, 2));
  const bool is_inline = (data->byte_count.value() & MLX5_INLINE_SEG) != 0;
  return (is_inline || ds == 3) ? static_cast<uint8_t>(wqebbs) : 0;
}

// Phase 3 for WQE k of the window.
DISSECT_HD inline void check_window_wqe(QpContext& qp, const mlx5::send_ring& staged,
                                        const NicTables& local, const RemoteSide& remote,
                                        WindowWqe& w) {
  using namespace mlx5;
  const uint64_t start = qp.sq_consumer + w.offset;
  const mlx5_wqe_ctrl_seg ctrl = *reinterpret_cast<const mlx5_wqe_ctrl_seg*>(staged.wqebb(start));
  w.opcode = ctrl_opcode(ctrl);
  w.signaled = ctrl_signaled(ctrl);
  w.plan = WritePlan{};
  w.syndrome = 0;
  if (w.opcode == MLX5_OPCODE_RDMA_WRITE) {
    uint32_t segments = 0;
    w.syndrome = check_write(qp, staged, local, remote, start, ctrl_ds(ctrl), &w.plan, &segments);
  }
}

DISSECT_HD inline bool overlaps(const WritePlan& p) {
  if (p.source == nullptr) return false;
  const uintptr_t s = reinterpret_cast<uintptr_t>(p.source);
  const uintptr_t d = reinterpret_cast<uintptr_t>(p.destination);
  return s < d + p.length && d < s + p.length;
}


// Copies between ranges that do not overlap with every load of a group issued before its stores:
// a byte loop through possibly aliasing pointers makes each load wait for the previous store,
// one L2 round trip per byte (measured on the H200: 8 B inline writes took microseconds).
template <typename Word>
DISSECT_HD inline uint64_t copy_groups(uint8_t* __restrict__ out, const uint8_t* __restrict__ in,
                                       uint64_t length) {
  constexpr uint32_t GROUP = 4;
  uint64_t i = 0;
  for (; i + GROUP * sizeof(Word) <= length; i += GROUP * sizeof(Word)) {
    Word w[GROUP];
DISSECT_UNROLL
    for (uint32_t k = 0; k < GROUP; ++k) w[k] = reinterpret_cast<const Word*>(in + i)[k];
DISSECT_UNROLL
    for (uint32_t k = 0; k < GROUP; ++k) reinterpret_cast<Word*>(out + i)[k] = w[k];
  }
  for (; i + sizeof(Word) <= length; i += sizeof(Word)) {
    *reinterpret_cast<Word*>(out + i) = *reinterpret_cast<const Word*>(in + i);
  }
  return i;
}

// Out of line: its alignment ladder and unrolled groups would otherwise sit inside every window
// (the engine warp is bound by instruction fetch); the common small inline payload takes
// copy_small_inline instead.
DISSECT_HD inline DISSECT_COLD void copy_unaliased(uint8_t* out, const uint8_t* in, uint64_t length) {
#if defined(__CUDA_ARCH__)
  const uintptr_t alignment = reinterpret_cast<uintptr_t>(out) | reinterpret_cast<uintptr_t>(in);
  uint64_t done = 0;
  if ((alignment & 15) == 0) {
    done = copy_groups<uint4>(out, in, length);
  } else if ((alignment & 7) == 0) {
    done = copy_groups<uint64_t>(out, in, length);
  } else if ((alignment & 3) == 0) {
    done = copy_groups<uint32_t>(out, in, length);
  }
  uint8_t tail[8];
  const uint64_t rest = length - done < 8 ? length - done : 0;
  for (uint64_t k = 0; k < rest; ++k) tail[k] = in[done + k];
  for (uint64_t k = 0; k < rest; ++k) out[done + k] = tail[k];
  if (length - done >= 8) copy_bytes(out + done, in + done, length - done);  // unaligned, large
#else
  std::memcpy(out, in, length);
#endif
}

// A one-segment payload under WARP_COPY_BYTES whose source and destination do not overlap (the
// rest are no express WQEs), by its lane: words of the widest size both ends allow, four in
// flight (copy_groups), then the bytes after them.
DISSECT_HD inline void copy_pointer(const WritePlan& plan) {
#if defined(__CUDA_ARCH__)
  uint8_t* out = plan.destination;
  const uint8_t* in = plan.source;
  const uint64_t length = plan.length;
  const uintptr_t ends = reinterpret_cast<uintptr_t>(out) | reinterpret_cast<uintptr_t>(in);
  uint64_t done = 0;
  if ((ends & 7) == 0) {
    done = copy_groups<uint64_t>(out, in, length);
  } else if ((ends & 3) == 0) {
    done = copy_groups<uint32_t>(out, in, length);
  } else {
    done = copy_groups<uint8_t>(out, in, length);
  }
  for (uint64_t k = done; k < length; ++k) out[k] = in[k];
#else
  std::memcpy(plan.destination, plan.source, plan.length);
#endif
}

// An inline payload of `length` bytes from the 4-byte words it was held in (a held WQE's: lone.h,
// held_windows.h): 4 B stores where the destination and length allow, else byte stores.
DISSECT_HD inline void store_payload_words(uint8_t* out, uint64_t length, const uint32_t* words) {
#if defined(__CUDA_ARCH__)
  if (((reinterpret_cast<uintptr_t>(out) | length) & 3) == 0) {
    for (uint32_t k = 0; 4 * k < length; ++k) reinterpret_cast<uint32_t*>(out)[k] = words[k];
    return;
  }
  const uint8_t* in = reinterpret_cast<const uint8_t*>(words);
  for (uint32_t k = 0; k < length; ++k) out[k] = in[k];
#else
  std::memcpy(out, words, length);
#endif
}

// The bytes of the first WQEBB after ctrl, raddr and the inline byte count: an inline payload this
// short never leaves the WQE's first WQEBB, so it cannot wrap the ring.
inline constexpr uint32_t FIRST_WQEBB_INLINE_BYTES =
    mlx5::MLX5_SEND_WQE_BB - (2 * mlx5::MLX5_SEND_WQE_DS + 4);

// The common inline payload (8 B values, small writes) in a few predicated 4-byte moves: the
// payload starts 4-byte aligned in the WQEBB, and most destinations are. False when it does not
// apply (length, alignment), and nothing was written.
DISSECT_HD inline bool copy_small_inline(const mlx5::send_ring& ring, uint64_t start, uint8_t* out,
                                         uint64_t length) {
  const uint8_t* in = ring.byte_at(start, 2 * mlx5::MLX5_SEND_WQE_DS + 4);
  if (length > FIRST_WQEBB_INLINE_BYTES || (length & 3) != 0 ||
      ((reinterpret_cast<uintptr_t>(out) | reinterpret_cast<uintptr_t>(in)) & 3) != 0) {
    return false;
  }
  constexpr uint32_t WORDS = FIRST_WQEBB_INLINE_BYTES / 4;
  uint32_t words[WORDS];
DISSECT_UNROLL
  for (uint32_t k = 0; k < WORDS; ++k) {
    if (4 * k < length) words[k] = reinterpret_cast<const uint32_t*>(in)[k];
  }
DISSECT_UNROLL
  for (uint32_t k = 0; k < WORDS; ++k) {
    if (4 * k < length) reinterpret_cast<uint32_t*>(out)[k] = words[k];
  }
  return true;
}

// An inline payload, WQEBB by WQEBB (it may wrap to slot 0 of the ring).
DISSECT_HD inline void copy_inline_payload(const mlx5::send_ring& ring, uint64_t start, uint8_t* out,
                                           uint64_t length) {
  uint32_t offset = 2 * mlx5::MLX5_SEND_WQE_DS + 4;  // after ctrl, raddr and the byte count
  while (length != 0) {
    const uint32_t room = mlx5::MLX5_SEND_WQE_BB - offset % mlx5::MLX5_SEND_WQE_BB;
    const uint32_t chunk = length < room ? static_cast<uint32_t>(length) : room;
    copy_unaliased(out, ring.byte_at(start, offset), chunk);
    out += chunk;
    offset += chunk;
    length -= chunk;
  }
}

// A checked WRITE's payload from its lane: the WQE ring and a registered source never overlap the
// destination unless the WQE names overlapping ranges (overlaps), which go through copy_bytes.
DISSECT_HD inline void perform_window_write(const mlx5::send_ring& staged, uint64_t start,
                                            const WritePlan& plan);

// Whether lane-private copying suits this WQE (the rest are copied warp-wide in order).
DISSECT_HD inline bool lane_copies(const WindowWqe& w) {
  return w.plan.length < WARP_COPY_BYTES || w.plan.source == nullptr || overlaps(w.plan);
}

// A medium payload (16 B aligned ends, at most 2 KiB) is copied by its lane too when the window
// holds enough of them: every lane then moves 64 B per memory round trip (copy_groups<uint4>), all
// lanes at once, where one warp-wide copy after another waits one round trip each, so the lanes
// finish first when the window's `medium` count exceeds length / 64 (32 writes of 512 B: 8 round
// trips instead of 32; gpu-goodput at 512 B was the GPU engine's bound, 26 Mmsg/s on 16 QPs, H200).
inline constexpr uint64_t MEDIUM_LANE_COPY_BYTES = 2048;
DISSECT_HD inline bool medium_payload(const WindowWqe& w) {
  const uintptr_t ends = reinterpret_cast<uintptr_t>(w.plan.destination) | reinterpret_cast<uintptr_t>(w.plan.source);
  return w.opcode == mlx5::MLX5_OPCODE_RDMA_WRITE && !lane_copies(w) && w.plan.length <= MEDIUM_LANE_COPY_BYTES &&
         (ends & 15) == 0;
}
DISSECT_HD inline bool copied_by_lane(const WindowWqe& w, uint32_t medium) {
  return lane_copies(w) || (medium_payload(w) && uint64_t{medium} * 64 > w.plan.length);
}

// The CQE of window WQE `w`, written into slot `index` of the send CQ.
template <Scope S>
DISSECT_HD inline void complete_window_wqe(const QpContext& qp, const WindowWqe& w,
                                           uint64_t index, uint64_t timestamp) {
  const WqeOutcome outcome{w.syndrome, w.opcode, w.signaled != 0, w.wqebbs, w.plan.length};
  mlx5::mlx5_cqe64 cqe;
  const uint8_t cqe_opcode = requester_cqe(qp, qp.sq_consumer + w.offset, outcome, &cqe, timestamp, CQE_PATH_STAGED);
  write_cqe_at<S>(qp.send_cq, index, cqe, cqe_opcode);
}

// What one visit to a QP did.
struct Served {
  uint32_t executed;  // WQEs consumed
  uint8_t syndrome;   // of the last failed WQE, 0 = none failed
  // A lone window (lone.h): nothing else was announced, so the visit ends after it.
  uint8_t lone = 0;
  // The visit ended with announced WQEs it did not execute (its budget spent, or scopes that a
  // refreshed copy changed): the engine kernel's doorbell watch visits the QP again next pass
  // whatever its doorbell says.
  uint8_t pending = 0;
};

DISSECT_HD inline void perform_window_write(const mlx5::send_ring& staged, uint64_t start,
                                            const WritePlan& plan) {
  if (plan.source == nullptr) {
    if (copy_small_inline(staged, start, plan.destination, plan.length)) return;
    copy_inline_payload(staged, start, plan.destination, plan.length);
  } else if (overlaps(plan)) {
    copy_bytes(plan.destination, plan.source, plan.length);
  } else {
    copy_unaliased(plan.destination, plan.source, plan.length);
  }
}

// Phase 4: the payloads of the first `moved` WQEs; on the GPU small ones (and medium ones in
// numbers) by their lane, then large ones one after the other by the whole warp; lanes that run in
// turn (the host) move each WQE's payload in WQE order. Ends with a warp barrier, so every lane's
// later release (write_cqe_at) covers every payload. `medium`: how many of them are medium payloads.
template <typename Lanes>
DISSECT_HD inline void perform_window(const Lanes& lanes, const Window& w, const QpContext& qp,
                                      uint32_t moved, uint32_t medium) {
  lanes.each(moved, [&](uint32_t k) {
    const WindowWqe& x = w.wqe[k];
    if (x.opcode == mlx5::MLX5_OPCODE_RDMA_WRITE && (Lanes::IN_TURN || copied_by_lane(x, medium))) {
      perform_window_write(w.staged(), qp.sq_consumer + x.offset, x.plan);
    }
  });
  if constexpr (!Lanes::IN_TURN) {
    uint32_t warp_copies = lanes.ballot(moved, [&](uint32_t k) {
      return w.wqe[k].opcode == mlx5::MLX5_OPCODE_RDMA_WRITE && !copied_by_lane(w.wqe[k], medium);
    });
    while (warp_copies != 0) {  // in WQE order; their destinations are disjoint (disjoint_prefix)
      const WindowWqe& x = w.wqe[lowest_set_bit(warp_copies)];
      lanes.copy(x.plan.destination, x.plan.source, x.plan.length);
      warp_copies &= warp_copies - 1;
    }
  }
  lanes.sync();
}

// A WQE that cannot share a window (or a flush): the leader executes it as the one-thread engine
// does.
template <typename Lanes>
DISSECT_HD DISSECT_COLD Served serve_alone(const Lanes& lanes, QpContext& qp, const NicTables& local) {
  uint8_t syndrome = 0;
  lanes.leader([&] { syndrome = execute_and_retire(qp, local); });
  return Served{1, lanes.broadcast(syndrome)};
}

// The bytes WQE `x` writes: empty unless it is a WRITE that passed its checks.
DISSECT_HD inline bool destinations_overlap(const WindowWqe& a, const WindowWqe& b) {
  if (a.syndrome != 0 || b.syndrome != 0 || a.plan.length == 0 || b.plan.length == 0) return false;
  const uintptr_t x = reinterpret_cast<uintptr_t>(a.plan.destination);
  const uintptr_t y = reinterpret_cast<uintptr_t>(b.plan.destination);
  return x < y + b.plan.length && y < x + a.plan.length;
}

// Phase 3b (a warp's lanes): how many of the window's first `count` WQEs write pairwise disjoint
// bytes. The lanes copy those at once; the window ends before the first WQE writing bytes an
// earlier one writes (finish_window), so it lands after them in a later window, as it would one
// WQE at a time. Ascending destinations (the common case) are recognised with one comparison per
// lane; anything else is compared pair by pair.
template <typename Lanes>
DISSECT_HD inline uint32_t disjoint_prefix(const Lanes& lanes, const Window& w, uint32_t count) {
  if (count <= 1) return count;
  const uint32_t all = count == 32 ? ~0u : (1u << count) - 1;
  const uint32_t ascending = lanes.ballot(count, [&](uint32_t k) {
    return k == 0 || (!destinations_overlap(w.wqe[k - 1], w.wqe[k]) &&
                      w.wqe[k - 1].plan.destination <= w.wqe[k].plan.destination);
  });
  if (ascending == all) return count;
  const uint32_t conflicts = lanes.ballot(count, [&](uint32_t k) {
    for (uint32_t j = 0; j < k; ++j) {
      if (destinations_overlap(w.wqe[j], w.wqe[k])) return true;
    }
    return false;
  });
  return conflicts == 0 ? count : lowest_set_bit(conflicts);
}

// Phase 1's copy of WQEBB `index` into the stage: four 16 B loads in flight at once.
DISSECT_HD inline void stage_wqebb(const QpContext& qp, const mlx5::send_ring& staged,
                                   uint64_t index) {
#if defined(__CUDA_ARCH__)
  const uint4* in = reinterpret_cast<const uint4*>(qp.sq.wqebb(index));
  uint4* out = reinterpret_cast<uint4*>(staged.wqebb(index));
  uint4 v[4];
  DISSECT_UNROLL
  for (int k = 0; k < 4; ++k) v[k] = in[k];
  DISSECT_UNROLL
  for (int k = 0; k < 4; ++k) out[k] = v[k];
#else
  std::memcpy(staged.wqebb(index), qp.sq.wqebb(index), mlx5::MLX5_SEND_WQE_BB);
#endif
}

// Counters live in the QpContext only, added with relaxed atomics: the host reads them while the
// engine runs, and the window never reads them back.
DISSECT_HD inline void add_count(uint64_t& counter, uint64_t n) {
  if (n != 0) add_relaxed<TABLE_SCOPE>(&counter, n);
}

// Makes `c` a fresh copy of `qp` (state acquired first: a QP in RESET may be a slot whose context
// is still being written) and finds its responder; returns the state. A connected QP with nothing
// announced (no new doorbell, nothing left past its consumer) is not copied: it reads as RESET,
// which serves nothing, exactly what the copy would have served. A warp serving more QPs than it
// keeps copies of (CACHED_QPS) refreshes every other QP on each visit, and the copy (the context,
// then its responder's state, then its NIC's header) is a chain of L2 round trips; the check is two
// (gpu-connection-scaling: thousands of idle QPs per warp, a few with work).
DISSECT_HD inline DISSECT_COLD uint32_t refresh_copy(QpCopy& c, QpContext& qp, const NicTables& local) {
  const uint32_t state = load_acquire<TABLE_SCOPE>(&qp.state);
  c.qp = nullptr;
  if (state == QP_STATE_RESET) return state;
  if (state == QP_STATE_RTS && qp.sq_target <= qp.sq_consumer &&
      load_acquire<Scope::system>(qp.doorbell) == qp.last_doorbell) {
    return QP_STATE_RESET;
  }
  c.view = qp;
  c.view.state = state;
  c.remote = remote_side(c.view);
  if (c.remote.nic != nullptr) {
    c.remote_tables = *c.remote.nic;
    c.remote.nic = &c.remote_tables;
    c.responder_pd = c.remote.responder->pd;
  }
  c.local_mrs = mr_table(local);
  c.last_lkey = 0;
  c.last_rkey = 0;
  c.qp = &qp;
  return state;
}

// Whether `c` may stand for `qp` in this window, and the doorbell read beside the checks: the QP's
// state and connection, its responder's state and the doorbell are loads in flight at once, one
// round trip. Only the doorbell is acquired (the WQEs it announces are read after it); the checks
// need to be fresh, not ordered: a QP or responder torn down stops this engine before its memory
// goes (gpu_engine.h, softnic.cpp), so a window that read a stale RTS still touches live memory.
// Fills `doorbell` when true.
// A DCI's copy has no responder to re-check: nothing of its context but its state changes while the
// engine runs (no connect; teardown stops the engine), so its state and the doorbell, one round trip.
template <Scope Doorbell>
DISSECT_HD inline bool dci_copy_holds(const QpCopy& c, QpContext& qp, uint64_t* doorbell) {
  if (c.view.transport != QP_TRANSPORT_DCI) return false;
  const uint32_t state = load_relaxed<Doorbell>(&qp.state);
  *doorbell = load_acquire<Doorbell>(c.view.doorbell);
  return state == QP_STATE_RTS;
}

template <Scope Doorbell>
DISSECT_HD inline bool copy_holds(const QpCopy& c, QpContext& qp, uint64_t* doorbell) {
  if (c.qp != &qp) return false;
  if (c.remote.responder == nullptr) return dci_copy_holds<Doorbell>(c, qp, doorbell);
  const uint32_t state = load_relaxed<Doorbell>(&qp.state);
  NicTables* const remote_nic = load_relaxed<TABLE_SCOPE>(&qp.remote_nic);
  const uint32_t remote_qp_index = load_relaxed<TABLE_SCOPE>(&qp.remote_qp_index);
  const uint32_t responder_state = load_relaxed<TABLE_SCOPE>(&c.remote.responder->state);
  *doorbell = load_acquire<Doorbell>(c.view.doorbell);
  return state == QP_STATE_RTS && remote_nic == c.view.remote_nic &&
         remote_qp_index == c.view.remote_qp_index && responder_state == QP_STATE_RTS;
}

// The doorbell's news applied to the copy; the QpContext receives the progress, its counters the
// doorbell counts, and both the doorbell's dates when it raised the target: `rung` (ring_date of
// `clock`), which a timing profile's windows and DC batches pace from, and `seen`. `paced`: a
// timing profile will pace the window; then `seen` is the clock after the read, and a Window
// without a pass clock dates the ring there too; without a profile the clock
// is not read here: `seen` is the start of the pass (0 without a pass clock). On the host a
// clock_gettime per doorbell was measured to cost more than the window.
DISSECT_HD inline void apply_doorbell(QpContext& qp, QpContext& v, uint64_t doorbell, bool paced,
                                      const DoorbellClock& clock) {
  if (doorbell == v.last_doorbell) return;
  const uint64_t doorbells = v.counters.doorbells, bad = v.counters.bad_doorbells;
  const uint64_t target = v.sq_target;
  note_doorbell(v, doorbell);
  if (v.sq_target != target && (paced || clock.pass_ns != 0)) {
    const uint64_t seen = paced ? now_ns() : clock.pass_ns;
    const uint64_t rung = ring_date(clock);
    v.doorbell_seen_ns = seen;
    v.doorbell_rung_ns = rung != 0 && rung < seen ? rung : seen;
    qp.doorbell_seen_ns = v.doorbell_seen_ns;
    qp.doorbell_rung_ns = v.doorbell_rung_ns;
  }
  add_count(qp.counters.doorbells, v.counters.doorbells - doorbells);
  add_count(qp.counters.bad_doorbells, v.counters.bad_doorbells - bad);
  qp.last_doorbell = v.last_doorbell;
  qp.sq_target = v.sq_target;
}

// One add to a shared CQ's counter by the leader (reserve_cqes), its result handed to every lane.
// Out of line: the engine warp is bound by instruction fetch, and a QP of its own CQ never runs it.
template <typename Lanes>
DISSECT_HD DISSECT_COLD uint64_t reserve_shared_cqes(const Lanes& lanes, const CqContext& cq,
                                                     uint32_t count) {
  uint64_t first = 0;
  lanes.leader([&] { first = reserve_cqes(cq, count); });
  const uint32_t high = lanes.broadcast(static_cast<uint32_t>(first >> 32));
  return (uint64_t{high} << 32) | lanes.broadcast(static_cast<uint32_t>(first));
}

// The first CQE number of a window's `count` CQEs: the QP's own counter, or a shared CQ's.
template <typename Lanes>
DISSECT_HD inline uint64_t reserve_window_cqes(const Lanes& lanes, const CqContext& cq,
                                               uint32_t count) {
  if (cq.shared_produced == nullptr || count == 0) return cq.produced;
  return reserve_shared_cqes(lanes, cq, count);
}

// What the leader needs to retire a window.
struct WindowTally {
  uint32_t executed;   // WQEs consumed (the failure included)
  uint32_t cqes;       // CQEs written
  uint32_t writes;     // successful WRITEs
  uint64_t bytes;      // their payload bytes
  bool failed;
  uint32_t announced;  // WQEBBs announced and not executed when the window opened (0: not noted)
};

// ModelCounters::deepest_backlog at a retirement, off the CQEs' path: the copy keeps the QP's
// deepest so far, so that the context is written only when it grows. A store, not an atomic max:
// the QP's one server writes it, and a copy refreshed from the context (refresh_copy) starts from
// what it wrote.
DISSECT_HD inline void note_backlog(QpContext& qp, QpContext& v, uint64_t announced) {
  if (announced <= v.counters.deepest_backlog) return;
  v.counters.deepest_backlog = announced;
  store_relaxed<TABLE_SCOPE>(&qp.counters.deepest_backlog, announced);
}

// `wqebbs`: the WQEBBs the window's WQEs occupy; `responder`: the QP's one responder (every WRITE
// of a window goes to it: check_write found it), when the window wrote.
DISSECT_HD inline void retire_window(QpContext& qp, QpContext& v, QpContext* responder,
                                     const WindowTally& t, uint32_t wqebbs) {
  v.sq_consumer += wqebbs;
  v.send_cq.produced += t.cqes;
  qp.sq_consumer = v.sq_consumer;
  qp.send_cq.produced = v.send_cq.produced;
  add_count(qp.counters.wqes_executed, t.executed);
  add_count(qp.counters.tx_packets, t.failed ? t.executed - 1 : t.executed);
  add_count(qp.counters.tx_bytes, t.bytes);
  add_count(qp.counters.cqes_written, t.cqes);
  if (t.writes != 0) {
    add_count(responder->counters.rx_bytes, t.bytes);
    add_count(responder->counters.rx_packets, t.writes);
  }
  note_backlog(qp, v, t.announced);
  if (t.failed) {
    add_count(qp.counters.error_cqes, 1);
    v.state = QP_STATE_ERROR;
    qp.state = QP_STATE_ERROR;
  }
}

// The window's WQE count from the sizes of phase 1: the chain from offset 0, uniform.
DISSECT_HD inline uint32_t chain_window(Window& window, uint32_t first_offset, uint32_t first_count) {
  uint32_t count = first_count;
  uint32_t offset = first_offset;
  const uint32_t limit = window.available < WINDOW_LANES ? window.available : WINDOW_LANES;
  while (count < WINDOW_LANES && offset < limit && window.wqebbs_at[offset] != 0) {
    window.wqe[count].offset = offset;
    window.wqe[count].wqebbs = window.wqebbs_at[offset];
    offset += window.wqebbs_at[offset];
    ++count;
  }
  return count;
}

// The pipe units a window claims (profile.h, pipe_ns: the slower of its two stages).
DISSECT_HD inline double pipe_cost_units(const PipeRates& r, uint32_t messages, uint64_t bytes) {
  return pipe_ns(r, messages, static_cast<double>(bytes)) * PIPE_UNITS_PER_NS;
}

// The connection-state model's share of a window (connection_state.h): the requester's context
// in this NIC's cache (a miss grows `cost`, this pipe's claim), the responder's in its NIC's (its
// pipe claimed here; returns when that claim ends, 0 for none). Out of line and only under a
// profile with the model: the fast path and the profiles without it load nothing more.
// A responder on this same NIC (the loopback rigs of nic-ceiling, gpu-rate, gpu-goodput: each QP
// connected to itself) is taken as a separate receiving NIC, as in the paper's two-node
// measurements those rigs stand for: charging its receive processing to this pipe would halve
// every 8 B rate the cx7-ib ceiling was calibrated with.
struct ConnectionCost {
  double send_units;  // added to this window's claim of its own pipe
  uint64_t received;  // when the responder's pipe is free of the window, ns (0: not claimed)
};
// `send`: the requester's lookup now (false: a lone window's, made after its CQE).
DISSECT_HD inline DISSECT_COLD ConnectionCost connection_state(Window& w, const QpContext& v,
                                                              uint32_t messages, bool send = true) {
  ConnectionCost out{0, 0};
  if (w.nic == nullptr) return out;
  if (send) send_processing(*w.nic, w.qp_cache, w.profile, v.qpn, &out.send_units);
  NicTables* const responder = through(v.remote_window, v.remote_nic);
  if (responder == w.nic) return out;
  out.received = receive_processing(*responder, w.copy->remote_tables, v.remote_window,
                                    QPN_BASE + v.remote_qp_index, messages);
  return out;
}

// The timing profile (profile.h): the time before which a window's payloads may not move. It
// claims the NIC's pipe (pipe.h) for the window's messages and bytes, every QP of the NIC sharing
// it. Returns the later of that slot and the doorbell's latency, which the caller waits for
// (finish_window) or holds the WQE until (hold_lone); the CQEs follow data_to_cqe after it, so
// the engine's own copying overlaps the modelled acknowledgement rather than adding to it.
// `connections`: the requester's context lookup now (its miss delays this window); false for a
// lone window, which makes it after its CQE (charge_connection_state). The responder's receive
// processing is claimed here either way: it is the responder's back-pressure.
DISSECT_HD inline uint64_t pace_payloads(Window& w, const QpContext& v, uint32_t messages,
                                         uint64_t bytes, bool pointer, bool connections = true) {
  DISSECT_PHASE_START;
  const TimingProfile& p = w.profile;
  // From the doorbell's ring date (apply_doorbell): the profile's latency is the NIC's from the
  // ring, and the engine's own sighting lag (up to a pass) is not added to it.
  uint64_t ready = v.doorbell_rung_ns + p.doorbell_to_data_ns + (pointer ? p.payload_read_ns : 0);
  double cost = pipe_cost_units(w.rates, messages, bytes);
  // Decided here, not in the call: with the requester's lookup after the CQE and the responder
  // on this NIC (the loopback rigs) the call looks nothing up, and cost ~1,650 cycles of
  // instruction fetch all the same (phase counters, H200, 2026-12-03).
  if (p.qp_cache_entries != 0 && messages != 0 &&
      (connections || through(v.remote_window, v.remote_nic) != w.nic)) {
    const ConnectionCost c = connection_state(w, v, messages, connections);
    cost += c.send_units;
    if (c.received > ready) ready = c.received;
  }
  DISSECT_PHASE(17);
  if (cost > 0 && w.pipe != nullptr) {
    const uint64_t end = claim_pipe<TABLE_SCOPE>(w.pipe, static_cast<uint64_t>(cost));
    if (end > ready) ready = end;
  }
  DISSECT_PHASE(18);
  return ready;
}

// A lone window's requester lookup, made after its CQE (lone.h): a send miss claims its cost of
// this NIC's pipe, so it delays the NIC's later messages rather than this one. Off the latency
// path: the lookup is dependent round trips (the cache's pointer, an exchange on its slot), 2,650
// cycles before the payload on the H200 (phase counters, 2026-12-03).
DISSECT_HD inline DISSECT_COLD void charge_connection_state(Window& w, uint32_t qpn);
DISSECT_HD inline void charge_connection_state(Window& w, const QpContext& v) { charge_connection_state(w, v.qpn); }
DISSECT_HD inline DISSECT_COLD void charge_connection_state(Window& w, uint32_t qpn) {
  if (w.profile.qp_cache_entries == 0 || w.nic == nullptr) return;
  double units = 0;
  send_processing(*w.nic, w.qp_cache, w.profile, qpn, &units);
  if (units > 0 && w.pipe != nullptr) claim_pipe<TABLE_SCOPE>(w.pipe, static_cast<uint64_t>(units));
}

// What finish_window asks of every WQE of the window, read in two passes (Lanes::ballots): the
// flags the payloads need before they move, then those the CQEs and the tally need after. Flag f of
// WQE k is bit k of mask f. Two passes, not one: with all five masks read before perform_window
// (whose pointer payloads go through an out-of-line copy, the masks live across the call),
// gpu-latency's pointer put+completion took 9.1 µs where the engine before took 7.9-8.4 (H200, one
// call, docs/results/h200/engine/gpu_latency_ab.txt); in two passes 8.7 (a later call). Inline
// puts and the rates did not move.
enum WqeFlag : uint32_t {
  WQE_FAILED,        // failed its checks
  WQE_MEDIUM,        // medium_payload
  WQE_READS_SOURCE,  // an RDMA WRITE with its payload in memory (not inline)
  WQE_BEFORE_PERFORM,
  WQE_WANTS_CQE = WQE_BEFORE_PERFORM,  // signalled, or failed
  WQE_WRITES,                          // an RDMA WRITE
  WQE_FLAGS
};
DISSECT_HD inline uint32_t wqe_flags(const WindowWqe& x) {
  const bool write = x.opcode == mlx5::MLX5_OPCODE_RDMA_WRITE;
  return uint32_t{x.syndrome != 0} << WQE_FAILED | uint32_t{medium_payload(x)} << WQE_MEDIUM |
         uint32_t{write && x.plan.source != nullptr} << WQE_READS_SOURCE |
         uint32_t{x.signaled != 0 || x.syndrome != 0} << WQE_WANTS_CQE |
         uint32_t{write} << WQE_WRITES;
}
// The lanes below `count`.
DISSECT_HD inline uint32_t lanes_below(uint32_t count) {
  return count >= 32 ? ~0u : (1u << count) - 1;
}

// Phases 3b-7 of a window: where it ends, then execute, complete, retire. A warp's lanes copy at
// once, so its window ends before its first WQE writing bytes an earlier one writes (disjoint_prefix;
// the rest waits for the next window). Lanes that run in turn (the host engine) move every payload in
// WQE order and execute the whole window. Before, the host engine ended the window there too, and a
// producer writing one word again and again (a flag, a counter, gpu-load's mini-proxy producers)
// got one WQE per window, each restaging the queue (measured on the H200: 0.5 M WQE/s per QP on
// chains of 12). The GPU engine keeps ending it (lanes.h, IN_TURN): performing the rest in order
// grew its code by 6 %; out of line, the call made its loop spill (ptxas: 255 registers, 36 B).
template <Scope Completion, typename Lanes>
DISSECT_HD inline Served finish_window(const Lanes& lanes, Window& w, QpContext& qp, QpContext& v) {
  DISSECT_PHASE_START;  // phase 4 counts the disjointness check, as it did inside serve_window
  const uint32_t count = Lanes::IN_TURN ? w.count : disjoint_prefix(lanes, w, w.count);
  uint32_t flags[WQE_BEFORE_PERFORM];
  lanes.ballots(count, [&](uint32_t k) { return wqe_flags(w.wqe[k]); }, flags);
  const uint32_t failures = flags[WQE_FAILED];
  const uint32_t moved = failures ? lowest_set_bit(failures) : count;
  const uint32_t executed = failures ? moved + 1 : count;
  DISSECT_PHASE(4);
  uint64_t data_ready = 0;  // leader only
  if (paced(lanes, w)) {
    const bool pointers = (flags[WQE_READS_SOURCE] & lanes_below(moved)) != 0;
    const uint64_t bytes = lanes.sum(moved, [&](uint32_t k) { return w.wqe[k].plan.length; });
    lanes.leader([&] {
      data_ready = pace_payloads(w, v, moved, bytes, pointers);
      wait_until(data_ready);
    });
  }
  perform_window(lanes, w, v, moved, popcount(flags[WQE_MEDIUM] & lanes_below(moved)));
  if (paced(lanes, w)) lanes.leader([&] { wait_until(cqe_release_ns(w.profile, data_ready)); });
  DISSECT_PHASE(5);

  uint32_t after[WQE_FLAGS - WQE_BEFORE_PERFORM];
  lanes.ballots(executed, [&](uint32_t k) { return wqe_flags(w.wqe[k]) >> WQE_BEFORE_PERFORM; }, after);
  const uint32_t cqe_mask = after[WQE_WANTS_CQE - WQE_BEFORE_PERFORM];
  // One clock read for the window's CQEs: on the host a clock_gettime each cost more than writing
  // the CQE; on the GPU every lane reads %globaltimer itself (one instruction, no shuffle).
  const uint64_t stamp = cqe_mask != 0 ? now_ns() : 0;
  const uint64_t first_cqe = reserve_window_cqes(lanes, v.send_cq, popcount(cqe_mask));
  lanes.each(executed, [&](uint32_t k) {
    if ((cqe_mask >> k) & 1) {
      complete_window_wqe<Completion>(v, w.wqe[k], first_cqe + popcount(cqe_mask & ((1u << k) - 1)),
                                      stamp);
    }
  });
  DISSECT_PHASE(6);
  WindowTally tally{};
  tally.executed = executed;
  tally.cqes = popcount(cqe_mask);
  tally.writes = popcount(after[WQE_WRITES - WQE_BEFORE_PERFORM] & lanes_below(moved));
  tally.bytes = lanes.sum(moved, [&](uint32_t k) { return w.wqe[k].plan.length; });
  tally.failed = failures != 0;
  const WindowWqe& last = w.wqe[executed - 1];
  lanes.leader([&] {
    tally.announced = w.available;
    retire_window(qp, v, w.copy->remote.responder, tally, last.offset + last.wqebbs);
  });
  DISSECT_PHASE(7);
  return Served{executed, failures ? w.wqe[moved].syndrome : uint8_t{0}};
}

// The copy a window of this QP works on: the warp's slot for it, or the scratch copy. Named from
// the Window, not through w.copy: through a pointer kept in shared memory the compiler no longer
// knows the copy is shared, and its fields go through generic loads and stores; a window's shared
// loads of fields the previous one had just stored that way waited ~600 cycles (phase counters,
// H200).
DISSECT_HD inline QpCopy& window_copy(Window& w, QpCopy* cache) {
  return cache != nullptr ? *cache : w.scratch;
}

// Phase 0 of a window: the doorbell and the QP's state, read into the warp's copy of the QP
// (`cache`, or the scratch copy); sets w.copy, w.state and w.available. `Doorbell`: the scope of
// the doorbell's submitters (EngineFlags). `checked`: an earlier window of this visit (serve_qp)
// found the copy holding. Then a copy in RTS that already knows of a full window's WQEBBs reads
// nothing: the doorbell's news waits for the window that needs it, and the QP's and responder's
// states are as fresh as the visit's first window (at most a visit's budget of WQEs old; a real
// NIC, too, executes WQEs it fetched before a state change reaches it). Every window of a long
// backlog read them before: one L2 round trip of the window's ~5,600 cycles (H200).
template <Scope Doorbell, typename Lanes>
DISSECT_HD inline void open_window(const Lanes& lanes, Window& w, QpContext& qp, QpCopy* cache,
                                   const NicTables& local, bool checked = false) {
  DISSECT_PHASE_START;
  lanes.leader([&] {
    DISSECT_PHASE_START;
    QpCopy& c = window_copy(w, cache);
    w.copy = &c;
    const QpContext& v = c.view;
    const bool backlog = checked && c.qp == &qp && v.state == QP_STATE_RTS &&
                         v.sq_target >= v.sq_consumer + WINDOW_LANES;
    if (!backlog) {
      uint64_t doorbell = 0;
      const bool profiled = paced(lanes, w);
      if (copy_holds<Doorbell>(c, qp, &doorbell)) {
        apply_doorbell(qp, c.view, doorbell, profiled, w.clock);
      } else {
        w.state = refresh_copy(c, qp, local);
        if (c.qp != nullptr && c.view.transport == QP_TRANSPORT_DCI) c.dc_route = DcRoute{};
        if (w.state != QP_STATE_RESET) {
          apply_doorbell(qp, c.view, load_acquire<Doorbell>(c.view.doorbell), profiled, w.clock);
        }
      }
    }
    w.state = c.qp == nullptr ? uint32_t{QP_STATE_RESET} : v.state;
    // A doorbell that ended inside a multi-WQEBB WQE leaves the consumer past the target.
    const uint64_t ahead = v.sq_target > v.sq_consumer ? v.sq_target - v.sq_consumer : 0;
    w.available = ahead < v.sq.wqebb_count ? static_cast<uint32_t>(ahead) : v.sq.wqebb_count;
    // Only a copy that stands for an answering, connected QP, or a DCI, in RTS is kept for the
    // next window (a DCI's responder is each WQE's DCT: dc_batch.h).
    if ((c.remote.responder == nullptr && v.transport != QP_TRANSPORT_DCI) || v.state != QP_STATE_RTS) {
      c.qp = nullptr;
    }
    DISSECT_PHASE(21);
  });
  if (w.available != 0) DISSECT_PHASE(0);  // heads of windows with work: most heads are idle polls
}

// The window of an open QP in RTS (open_window) whose WQEs go through the stage in shared memory:
// any mix of window WQEs (express.h takes the windows of one-WQEBB WQEs only). `Completion`: the
// scope of the CQE's and the payload's observers (EngineFlags).
template <Scope Completion, typename Lanes>
DISSECT_HD inline Served serve_staged_window(const Lanes& lanes, Window& w, QpContext& qp,
                                             const NicTables& local) {
  DISSECT_PHASE_START;
  QpContext& v = w.copy->view;
  const uint32_t probe = w.available < WINDOW_LANES ? w.available : WINDOW_LANES;
  const mlx5::send_ring staged = w.staged();
  const RemoteSide remote = w.copy->remote;
  // Stage and, for a one-WQEBB WQE (every 8 B inline and one-segment write), check in the same
  // lane pass: while every WQEBB before lane i starts a one-WQEBB WQE, lane i's WQEBB is WQE i of
  // the window, read back from the lane's own stage slot, so its MR loads follow its WQEBB load
  // without a warp barrier between. A lane past the first other WQEBB checks in vain: checking
  // moves nothing, and chain_window's WQEs from there on are checked again below.
  lanes.each(probe, [&](uint32_t i) {
    stage_wqebb(v, staged, v.sq_consumer + i);
    const uint8_t size = window_wqe_size(v, staged, i, w.available);
    w.wqebbs_at[i] = size;
    if (size == 1) {
      w.wqe[i].offset = i;
      w.wqe[i].wqebbs = 1;
      check_window_wqe(v, staged, local, remote, w.wqe[i]);
    }
  });
  DISSECT_PHASE(1);
  const uint32_t single = lanes.ballot(probe, [&](uint32_t i) { return w.wqebbs_at[i] == 1; });
  const uint32_t first = single == ~0u ? WINDOW_LANES : lowest_zero_bit(single);
  lanes.leader([&] { w.count = chain_window(w, first, first); });
  if (w.count == 0) {
    lanes.leader([&] { w.copy->qp = nullptr; });  // execute_and_retire moves the QpContext on
    return serve_alone(lanes, qp, local);
  }
  DISSECT_PHASE(2);
  if (w.count > first) {
    lanes.each(w.count, [&](uint32_t k) {
      if (k >= first) check_window_wqe(v, staged, local, remote, w.wqe[k]);
    });
  }
  DISSECT_PHASE(3);
  return finish_window<Completion>(lanes, w, qp, v);
}

}  // namespace dissect::softnic
