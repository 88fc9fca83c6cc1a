// Two express windows at once: with 64 or more WQEBBs announced (a backlog: a ring filled ahead of
// its doorbell, a submitter faster than one QP's windows), lane k carries WQEs k and 32 + k through
// one pass of the express window's phases (express.h), so one QP's windows pay their fixed work
// once per 64 WQEs: the head (open_window), the ballots, the CQE reservation, the warp barrier
// before the CQEs' release, the retirement and its counters. One engine warp serves one QP, so
// that fixed work bounded one QP's rate (nic-ceiling, one QP: 16.9 M msg/s on the H100, below the
// paper's 21.6 for one warp on one QP, Table 5).
//
// It takes only what needs no decision between the two windows: every WQE joins an express window
// and passes its checks, each half's destinations are pairwise apart (disjoint_prefix) and the
// halves' spans are apart, the send CQ is not collapsed (its one entry is elected per window), and
// no timing profile paces the windows. Anything else returns Served{0, 0} with no side effect, and
// the single express window (or the staged one) takes the WQEs, as before: the outcome is that of
// executing them one at a time (execute.h) either way, since the 64 move disjoint bytes and their
// CQEs keep WQE order (half 1's numbered after half 0's).
#pragma once

#include <cstdint>

#include "express.h"

namespace dissect::softnic {

// Reads and checks WQEs `k` and 32 + `k` of a two-window pass, the guessed key contexts loaded once
// for both and the pair after next prefetched into L1 (prefetch_next_wqebb's reason). The second
// WQEBB is read after the first is checked: in a backlog it is in L1 already (prefetched by the
// pass before), and both held at once spilled the fast engine kernel (ptxas, sm_90: 28 B).
DISSECT_HD inline void read_express_pair(const QpCopy& c, uint32_t k, ExpressWqe& first, ExpressWqe& second) {
  const QpContext& v = c.view;
  const uint64_t start = v.sq_consumer + k;
  read_wqebb(v, start, first.word);
  prefetch_wqebb(v, start + 2 * WINDOW_LANES);
  prefetch_wqebb(v, start + 3 * WINDOW_LANES);
  const KeyGuess g = guess_keys(c);
  check_express_wqe(c, start, first, g);
  read_wqebb(v, start + WINDOW_LANES, second.word);
  check_express_wqe(c, start + WINDOW_LANES, second, g);
}

DISSECT_HD inline ByteRange destination_range(const ExpressWqe& e) {
  const uint64_t begin = reinterpret_cast<uintptr_t>(e.plan.destination);
  return ByteRange{begin, begin + e.plan.length};
}

// Executes WQEs consumer .. consumer + 63 of `copy` (w.copy, opened by open_window, in RTS) as two
// express windows in one pass; Served{0, 0} without a side effect when they do not all qualify
// (above).
template <Scope Completion, typename Lanes>
DISSECT_HD inline Served serve_express_pair(const Lanes& lanes, Window& w, QpCopy& copy, QpContext& qp) {
  QpContext& v = copy.view;
  const RemoteSide remote = copy.remote;
  if (w.available < 2 * WINDOW_LANES || v.transport != QP_TRANSPORT_RC || remote.responder == nullptr ||
      v.send_cq.collapsed || paced(lanes, w)) {
    return Served{0, 0};
  }
  ExpressWqe x[2][Lanes::SLOTS];
  lanes.mine(WINDOW_LANES, [&](uint32_t k) {
    read_express_pair(copy, k, x[0][lanes.slot(k)], x[1][lanes.slot(k)]);
  });
  const uint32_t clean = lanes.ballot(WINDOW_LANES, [&](uint32_t k) {
    const ExpressWqe& a = x[0][lanes.slot(k)];
    const ExpressWqe& b = x[1][lanes.slot(k)];
    return a.joins != 0 && b.joins != 0 && a.syndrome == 0 && b.syndrome == 0;
  });
  if (clean != lanes_below(WINDOW_LANES)) return Served{0, 0};
  ByteRange spans[2];
  DISSECT_UNROLL
  for (uint32_t h = 0; h < 2; ++h) {
    const auto range = [&](uint32_t k) { return destination_range(x[h][lanes.slot(k)]); };
    if (lanes.disjoint_prefix(WINDOW_LANES, range) != WINDOW_LANES) return Served{0, 0};
    spans[h] = lanes.span(WINDOW_LANES, range);
  }
  if (spans[0].begin < spans[1].end && spans[1].begin < spans[0].end) return Served{0, 0};
  // What the retirement needs, taken now: fewer registers held through the CQEs and payloads.
  uint32_t writes = 0;
  DISSECT_UNROLL
  for (uint32_t h = 0; h < 2; ++h) {
    writes += popcount(lanes.ballot(WINDOW_LANES, [&](uint32_t k) {
      return x[h][lanes.slot(k)].opcode == mlx5::MLX5_OPCODE_RDMA_WRITE;
    }));
  }

  uint32_t cqe_mask[2];
  DISSECT_UNROLL
  for (uint32_t h = 0; h < 2; ++h) {
    cqe_mask[h] = lanes.ballot(WINDOW_LANES, [&](uint32_t k) { return x[h][lanes.slot(k)].signaled != 0; });
  }
  const uint32_t cqes = popcount(cqe_mask[0]) + popcount(cqe_mask[1]);
  const uint64_t stamp = cqes != 0 ? now_ns() : 0;
  const uint64_t first_cqe = reserve_window_cqes(lanes, v.send_cq, cqes);
  DISSECT_UNROLL
  for (uint32_t h = 0; h < 2; ++h) {
    const uint64_t first = first_cqe + (h == 0 ? 0 : popcount(cqe_mask[0]));
    lanes.mine(WINDOW_LANES, [&](uint32_t k) {
      ExpressWqe& e = x[h][lanes.slot(k)];
      e.cqe = nullptr;
      if ((cqe_mask[h] >> k) & 1) {
        write_express_cqe(v, e, h * WINDOW_LANES + k, first + popcount(cqe_mask[h] & lanes_below(k)), stamp);
      }
    });
  }
  // Half 0's payloads before half 1's: the host's lanes run in turn, and the bytes are apart anyway.
  DISSECT_UNROLL
  for (uint32_t h = 0; h < 2; ++h) {
    lanes.mine(WINDOW_LANES, [&](uint32_t k) { store_payload(x[h][lanes.slot(k)]); });
  }
  // Every lane's CQE release below covers every lane's payload (publish_cqe: cumulativity).
  lanes.sync();
  DISSECT_UNROLL
  for (uint32_t h = 0; h < 2; ++h) {
    lanes.mine(WINDOW_LANES, [&](uint32_t k) {
      const ExpressWqe& e = x[h][lanes.slot(k)];
      if (e.cqe != nullptr) publish_cqe<Completion>(e.cqe, e.cqe_tail);
    });
  }
  WindowTally tally{};
  tally.executed = 2 * WINDOW_LANES;
  tally.cqes = cqes;
  tally.writes = writes;
  tally.bytes = lanes.sum(WINDOW_LANES, [&](uint32_t k) {
    return x[0][lanes.slot(k)].plan.length + x[1][lanes.slot(k)].plan.length;
  });
  tally.failed = false;
  lanes.leader([&] {
    w.count = 2 * WINDOW_LANES;
    retire_window(qp, v, remote.responder, tally, 2 * WINDOW_LANES);
    const ExpressWqe& first = x[0][lanes.slot(0)];  // the leader's own: the next window's guess
    if (first.rkey != 0) {
      copy.last_rkey = first.rkey;
      if (first.lkey != 0) copy.last_lkey = first.lkey;
    }
  });
  return Served{2 * WINDOW_LANES, 0};
}

}  // namespace dissect::softnic
