// The telemetry policy of the submit path: where a submitter calls telemetry (at post, at the
// doorbell, at every CQ poll, and when a CQE retires a range of WQEBBs), in submit paths whose
// policy counts (counted<Ordering>, below). It sits in the nic layer beside the counter block it
// updates (nic/qp_counters.h), below gda, which names it (gda/ordering.h: gda::counted and the
// hooks are these), and below the proxy's host poster, which calls the same hooks. Its names stay
// in dissect::telemetry, the vocabulary, as qp_counters.h's do. With `qp.telemetry` null
// (telemetry off, or the QP has no slot) each hook is one predictable branch. The same code runs
// on host threads (slot in host memory) and on GPU threads (slot and post_stamps in GPU memory,
// see src/softnic/gpu_slot.h).
//
// Cost model: a post touches no counter. It writes one word, its WQE's stamp, into the WQE's start
// slot of `qp.post_stamps` (and zero into the slots of its other WQEBBs, so that a range read later
// never sees an earlier lap's stamp). The doorbell's ringer sums the stamps of the range it rings
// and adds the sums with owned (single-writer) adds: one thread at a time rings a QP (the exclusive
// submitter, or the holder of post_lock), so on the host no locked instruction is paid per WQE.
// The poller that retires a range counts the stamps in it with one add per CQE: an atomic one on a
// shared QP (several pollers may retire disjoint ranges at once), a single-writer one on an
// exclusive QP, whose submitter alone drains its CQ. Slots are written only by the
// submitter that owns them and, for sampled WQEs, rewritten by the ringer before its doorbell;
// pollers only read them, after the CQE, which the doorbell precedes.
//
// Sampling: a WQE is in the 1-in-N latency sample when its WQEBBs cover a ring index that is a
// multiple of N. Ring indices are handed out once each, in posting order, so this selects by
// posting position without a shared sequence counter: for one-WQEBB WQEs exactly one in N
// (ceil(n / N) of the first n); a WQE of w WQEBBs is sampled with probability min(1, w / N).
// Completion latency is post -> the CQE that retires the WQE (unsignalled WQEs included).
#pragma once

#include <cstdint>
#include <type_traits>

#include "dissect/common/sharing.h"
#include "dissect/mlx5/wqe.h"
#include "dissect/nic/handles.h"
#include "dissect/nic/qp_counters.h"

namespace dissect::telemetry {

// -DDISSECT_WITH_TELEMETRY=OFF builds the data path with no hook at all: the reference against
// which docs/telemetry.md measures what a disabled (null-slot) hook costs.
#if defined(DISSECT_TELEMETRY_COMPILED_OUT)
inline constexpr bool TELEMETRY_COMPILED = false;
#else
inline constexpr bool TELEMETRY_COMPILED = true;
#endif

// Telemetry is a compile-time policy of the submit path, beside its ordering: counted<Ordering> is
// the ordering gda/ordering.h names, with the hooks below compiled in; a bare ordering has none,
// so its put compiles to the same SASS as a build without telemetry
// (tests/cpu/telemetry/telemetry_policy_ptx_test.sh compares the PTX of both). Why not a runtime
// check everywhere: with the hooks in every put (a null check each), put_value was 2,536 SASS
// instructions and 56 registers against 272 and 32 without them (sm_90, nvcc 13.0), and a kernel
// carrying a put it never calls kept its live values in local memory (gpu-kernel-cost's compute
// caller lost 80 % of its throughput on the H200).
template <typename Ordering>
struct counted : Ordering {
  static constexpr bool counts_telemetry = true;
};

template <typename Policy, typename = void>
struct counts_telemetry : std::false_type {};
template <typename Policy>
struct counts_telemetry<Policy, std::void_t<decltype(Policy::counts_telemetry)>>
    : std::bool_constant<Policy::counts_telemetry> {};
// Whether `Policy`'s submit path calls the hooks.
template <typename Policy>
inline constexpr bool COUNTS = TELEMETRY_COMPILED && counts_telemetry<Policy>::value;

// What a builder wrote (gda/wqe.h), for the post hook: the submit path passes it on when its
// policy counts.
struct PostNote {
  uint64_t bytes;
  uint8_t opcode;
  uint32_t ds;
};

// The stamp a post writes:
//   bits 0..4   WQEBBs of the WQE (1..16); nonzero marks a WQE start
//   bits 5..6   opcode class: 1 RDMA write, 2 RDMA write with immediate, 0 other
//   bit  7      in the latency sample
//   bits 8..39  payload bytes
//   bits 40..63 sampled only: post time in 16 ns units, modulo 2^24 (a 268 ms window)
// The ringer reads its clock once when its range holds a sampled WQE, rebuilds each sampled post
// time from it (exact to 16 ns while post -> doorbell stays under 268 ms) and rewrites the stamp:
//   bits 0..4   WQEBBs, bit 7 sampled, bits 8..63 post time in ns modulo 2^56
namespace post_stamp {
inline constexpr uint64_t WQEBBS = 0x1f;
inline constexpr uint32_t CLASS_SHIFT = 5;
inline constexpr uint64_t CLASS_WRITE = 1;
inline constexpr uint64_t CLASS_WRITE_IMM = 2;
inline constexpr uint64_t SAMPLED = 1u << 7;
inline constexpr uint32_t BYTES_SHIFT = 8;
inline constexpr uint64_t BYTES_MAX = 0xffffffffull;
inline constexpr uint32_t TIME_SHIFT = 40;
inline constexpr uint32_t TIME_UNIT_SHIFT = 4;  // 16 ns
inline constexpr uint64_t TIME_WINDOW_MASK = (uint64_t{1} << 24) - 1;
inline constexpr uint32_t RUNG_TIME_SHIFT = 8;
inline constexpr uint64_t RUNG_TIME_MASK = (uint64_t{1} << 56) - 1;

DISSECT_HD constexpr uint64_t opcode_class(uint8_t opcode) {
  return opcode == mlx5::MLX5_OPCODE_RDMA_WRITE       ? CLASS_WRITE
         : opcode == mlx5::MLX5_OPCODE_RDMA_WRITE_IMM ? CLASS_WRITE_IMM
                                                      : 0;
}
}  // namespace post_stamp

namespace detail {
// Inline, unlike the other hook bodies (below): a call per WQE cost a counted post of 16 writes
// with telemetry on 27 % more issue time than the inlined store (H200, gpu-telemetry-rate).
DISSECT_HD inline void stamp_post(uint64_t* post_stamps, uint64_t mask, uint64_t sample_mask,
                                  uint64_t start, PostNote note) {
  namespace ps = post_stamp;
  const uint64_t wqebbs = mlx5::wqebbs_for_ds(note.ds);
  const uint64_t bytes = note.bytes;
  uint64_t stamp = wqebbs | ps::opcode_class(note.opcode) << ps::CLASS_SHIFT |
                   (bytes < ps::BYTES_MAX ? bytes : ps::BYTES_MAX) << ps::BYTES_SHIFT;
  // (-start) mod N is the distance to the next multiple of N: covered when below the WQE's size.
  if (((0 - start) & sample_mask) < wqebbs) {
    stamp |= ps::SAMPLED | (clock_ns() >> ps::TIME_UNIT_SHIFT) << ps::TIME_SHIFT;
  }
  post_stamps[start & mask] = stamp;
  for (uint64_t k = 1; k < wqebbs; ++k) post_stamps[(start + k) & mask] = 0;
}
}  // namespace detail

template <typename Policy>
DISSECT_HD inline void note_post(const nic::QpHandle& qp, uint64_t start, const PostNote& note) {
  if constexpr (COUNTS<Policy>) {
    if (qp.telemetry != nullptr) {
      detail::stamp_post(qp.post_stamps, qp.sq.mask(), qp.telemetry_sample_mask, start, note);
    }
  }
}

namespace detail {
// What the ringer has summed so far over its range's stamps.
struct RungSums {
  DoorbellTally tally;
  uint32_t run_bucket = 0;  // payload sizes go in as runs: one add per change of size bucket
  uint64_t run = 0;
  uint64_t now_units = 0;   // the ringer's clock, read at the first sampled WQE
};

DISSECT_HD inline void sum_stamp(QpCounters* counters, uint64_t* slot, uint64_t stamp,
                                 RungSums& sums) {
  namespace ps = post_stamp;
  if (stamp == 0) return;
  const uint64_t bytes = (stamp >> ps::BYTES_SHIFT) & ps::BYTES_MAX;
  const uint64_t op_class = (stamp >> ps::CLASS_SHIFT) & 3;
  ++sums.tally.wqes;
  sums.tally.payload_bytes += bytes;
  sums.tally.wqebbs += stamp & ps::WQEBBS;
  sums.tally.writes += op_class == ps::CLASS_WRITE;
  sums.tally.write_imms += op_class == ps::CLASS_WRITE_IMM;
  const uint32_t bucket = payload_size_bucket(bytes);
  if (bucket != sums.run_bucket && sums.run != 0) {
    on_rung_sizes(counters, sums.run_bucket, sums.run);
    sums.run = 0;
  }
  sums.run_bucket = bucket;
  ++sums.run;
  if (stamp & ps::SAMPLED) {
    if (sums.now_units == 0) sums.now_units = clock_ns() >> ps::TIME_UNIT_SHIFT;
    const uint64_t age = (sums.now_units - (stamp >> ps::TIME_SHIFT)) & ps::TIME_WINDOW_MASK;
    const uint64_t posted_ns = (sums.now_units - age) << ps::TIME_UNIT_SHIFT;
    *slot = (stamp & ps::WQEBBS) | ps::SAMPLED | (posted_ns & ps::RUNG_TIME_MASK) << ps::RUNG_TIME_SHIFT;
  }
}
}  // namespace detail

// Calls visit(slot, stamp) for each WQEBB slot of [from, to), in order. The stamps are loaded
// STAMP_LOADS at a time, every load issued before any is used: on a GPU they were written moments
// ago by this thread's posts and live in L2, so reading them one after another would cost one L2
// round trip per WQE on the submitter's path; this way it is one per chunk. (32 per chunk was
// measured slower on the H200 than 8: gpu-rate at 16 QPs, N = 16, 26.4 against 31.3 Mmsg/s.)
inline constexpr uint32_t STAMP_LOADS = 8;

template <typename Visit>
DISSECT_HD inline void for_each_stamp(uint64_t* post_stamps, uint64_t mask, uint64_t from,
                                      uint64_t to, Visit&& visit) {
  for (uint64_t chunk = from; chunk < to; chunk += STAMP_LOADS) {
    uint64_t stamps[STAMP_LOADS];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (uint32_t k = 0; k < STAMP_LOADS; ++k) {
      stamps[k] = chunk + k < to ? post_stamps[(chunk + k) & mask] : 0;
    }
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (uint32_t k = 0; k < STAMP_LOADS; ++k) visit(&post_stamps[(chunk + k) & mask], stamps[k]);
  }
}

// The doorbell's and the retirement's bodies run only with a slot: out of line, so that a counted
// submit path with telemetry off carries a load and a branch there rather than their loops
// (H200, gpu-telemetry-rate, a counted post of 16 writes with no slot: 61 ns of issue a message
// against 45 compiled out with every body inlined, 53 against 48 with all three out of line).
// Arguments by value: a handle passed by reference to a call would be copied to the stack.
namespace detail {
// The ringer announces the WQEs that start in [from, to) as one doorbell.
DISSECT_HD inline DISSECT_COLD void tally_doorbell(QpCounters* counters,
                                                   uint64_t* post_stamps, uint64_t mask,
                                                   uint64_t from, uint64_t to) {
  RungSums sums;
  for_each_stamp(post_stamps, mask, from, to, [&](uint64_t* slot, uint64_t stamp) {
    sum_stamp(counters, slot, stamp, sums);
  });
  if (sums.run != 0) on_rung_sizes(counters, sums.run_bucket, sums.run);
  on_rung(counters, sums.tally);
}
}  // namespace detail

template <typename Policy>
DISSECT_HD inline void note_doorbell(const nic::QpHandle& qp, uint64_t from, uint64_t to) {
  if constexpr (COUNTS<Policy>) {
    if (qp.telemetry != nullptr) {
      detail::tally_doorbell(qp.telemetry, qp.post_stamps, qp.sq.mask(), from, to);
    }
  }
}

// An exclusive QP's send CQ is drained by its one submitter, so its completion-side counters have
// one writer; a shared QP's pollers race.
template <Sharing S>
inline constexpr Writers POLLERS =
    S == Sharing::exclusive ? Writers::one : Writers::many;

namespace detail {
// One CQE retired [from, to): each WQE that starts there is completed, the sampled ones with
// their latency; the counts go in with one add each.
template <Sharing S>
DISSECT_HD DISSECT_COLD void tally_retired(QpCounters* counters, uint64_t* post_stamps,
                                           uint64_t mask, uint64_t from, uint64_t to) {
  namespace ps = post_stamp;
  uint64_t wqes = 0;
  uint64_t now = 0;
  for_each_stamp(post_stamps, mask, from, to, [&](uint64_t*, uint64_t stamp) {
    if (stamp == 0) return;
    ++wqes;
    if (stamp & ps::SAMPLED) {
      if (now == 0) now = clock_ns();
      const uint64_t latency = (now - (stamp >> ps::RUNG_TIME_SHIFT)) & ps::RUNG_TIME_MASK;
      record_latency_sample<POLLERS<S>>(counters, latency);
    }
  });
  on_completions<POLLERS<S>>(counters, wqes, 1);
}
}  // namespace detail

template <typename Policy, Sharing S>
DISSECT_HD inline void note_retired(const nic::QpHandle& qp, uint64_t from, uint64_t to) {
  if constexpr (COUNTS<Policy>) {
    if (qp.telemetry != nullptr) {
      detail::tally_retired<S>(qp.telemetry, qp.post_stamps, qp.sq.mask(), from, to);
    }
  }
}

template <typename Policy, Sharing S>
DISSECT_HD inline void note_poll(const nic::QpHandle& qp) {
  if constexpr (COUNTS<Policy>) on_cq_poll<POLLERS<S>>(qp.telemetry);
}
template <typename Policy, Sharing S>
DISSECT_HD inline void note_error(const nic::QpHandle& qp) {
  if constexpr (COUNTS<Policy>) on_cq_error<POLLERS<S>>(qp.telemetry);
}

}  // namespace dissect::telemetry
