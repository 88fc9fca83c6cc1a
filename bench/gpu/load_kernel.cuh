// The kernel of gpu-load's mini-gda path (Figure 6, Table 11): one launch holds the probe and
// the background, so that the background runs for exactly as long as the probe measures.
//
//   block 0, lane 0   the pinger (endpoint A): an 8 B put into the landing word of its queue's
//                     destination, then waits for the reply in the responder's; times the round
//                     trip in clock64 cycles, and retires its put outside the span
//   block 1, lane 0   the responder (endpoint B): waits for request i, answers i through its queue
//   blocks 2..        background CTAs, one warp each: endpoint (b - 2) / N, producer (b - 2) % N;
//                     `batch` 8 B writes from registers per cooperative post (gda/warp.h, one
//                     reservation and one doorbell per post, the last WQE signalled), paced when
//                     asked, until the pinger raises `stop`
//
// The probe's loop is probe_kernel.cuh's (both paths share it); this file holds its mini-gda side.
// Queues are loopback QPs of one GPU softnic (loopback_qps.h), so a QP's destination buffer
// stands for the other endpoint's memory: A's put lands in A's probe QP's buffer, which B polls.
// A QP with one submitter is driven exclusively; one shared by several (CTAs on a pool, or the
// probe on its endpoint's first QP) with Sharing::shared, by everyone on it.
#pragma once

#include <cstdint>

#include "dissect/bench/gpu_load_plan.h"
#include "dissect/common/clock.h"
#include "dissect/gda/gda.h"
#include "harness.cuh"
#include "loopback_qps.h"
#include "probe_kernel.cuh"

namespace dissect::bench::gpu {

inline constexpr uint32_t LOAD_SLOTS = 64;         // destination slots per background CTA
inline constexpr uint32_t LOAD_LANDING_BYTES = 64;  // the probe's landing word, one line

struct LoadArgs {
  const LoopbackTarget* targets;  // one per QP of the layout
  QueueLayout layout;
  uint32_t batch;                 // WQEs per cooperative post (1..32)
  double pace_period_ns;          // between one warp's posts; 0: back to back
  ProbePlan probe;                 // its stop flag ends the background too
  unsigned long long* posted;      // per background CTA: messages posted so far
  uint32_t* failure;               // [status, qp, SendQueueState::error], first only
};

DISSECT_HD inline uint64_t load_value(uint64_t message, uint32_t cta) {
  return (message * 0x9e3779b97f4a7c15ull) ^ (uint64_t{cta} << 40) ^ 1;
}

// Where background CTA `producer` of a QP writes: after the landing line, LOAD_SLOTS words per CTA.
DISSECT_HD inline uint64_t load_slot_offset(const QueueLayout& l, uint32_t producer, uint64_t message) {
  return LOAD_LANDING_BYTES + (uint64_t{l.slot_group(producer)} * LOAD_SLOTS + message % LOAD_SLOTS) * 8;
}

using LoadPolicy = gda::ordering::gpu_fence;  // GPU engine, GPU-resident queues

__device__ inline void load_failure(const LoadArgs& a, uint32_t status, uint32_t qp) {
  if (atomicCAS(&a.failure[0], 0u, status) == 0) {
    a.failure[1] = qp;
    a.failure[2] = a.targets[qp].qp.state->error;
  }
}

__device__ inline bool stop_raised(const LoadArgs& a) { return probe_stopped(a.probe.stop); }

// Background messages posted so far, every CTA's count. Posted rather than completed: a QP's
// cons_idx advances only when someone polls its CQ (a submitter polls when its ring is full), so
// it lags by up to a queue's depth, while a CTA posts no further than one queue ahead of the NIC.
__device__ inline uint64_t background_posted(const LoadArgs& a) {
  uint64_t n = 0;
  for (uint32_t b = 0; b < 2 * a.layout.producers; ++b) n += load_relaxed<Scope::gpu>(&a.posted[b]);
  return n;
}

template <gda::Sharing S>
__device__ inline gda::Status post_background(const LoadArgs& a, const LoopbackTarget& t, uint32_t cta,
                                       uint32_t producer, uint64_t first) {
  uint64_t end = 0;
  return gda::post_values_cooperative<LoadPolicy, S>(
      gda::Warp{}, t.qp, a.batch, 8, t.rkey,
      [&](uint32_t i) { return load_value(first + i, cta); },
      [&](uint32_t i) { return reinterpret_cast<uint64_t>(t.dst + load_slot_offset(a.layout, producer, first + i)); },
      &end, gda::Completion::signaled);
}

// One background warp until the stop flag; lane 0 decides and broadcasts, so the warp stays converged.
__device__ inline void background_warp(const LoadArgs& a, uint32_t b) {
  const uint32_t endpoint = b / a.layout.producers, producer = b % a.layout.producers;
  const uint32_t q = a.layout.background(endpoint, producer);
  const LoopbackTarget t = a.targets[q];
  const bool shared = a.layout.submitters_on(q) > 1;
  PaceSchedule pace(now_ns(), a.pace_period_ns);
  gda::Status s = gda::Status::ok;
  uint64_t m = 0;
  for (;;) {
    bool go = true;
    if (threadIdx.x == 0) {
      while (!pace.due(now_ns()) && !stop_raised(a)) {
      }
      pace.started(now_ns());
      go = !stop_raised(a);
    }
    if (!__shfl_sync(0xffffffffu, go, 0)) break;
    s = shared ? post_background<gda::Sharing::shared>(a, t, b, producer, m)
               : post_background<gda::Sharing::exclusive>(a, t, b, producer, m);
    if (s != gda::Status::ok) break;
    m += a.batch;
    if (threadIdx.x == 0) store_relaxed<Scope::gpu>(&a.posted[b], static_cast<unsigned long long>(m));
  }
  if (threadIdx.x != 0) return;
  if (s == gda::Status::ok) {
    s = shared ? gda::quiet<LoadPolicy, gda::Sharing::shared>(t.qp)
               : gda::quiet<LoadPolicy, gda::Sharing::exclusive>(t.qp);
  }
  if (s != gda::Status::ok) load_failure(a, s == gda::Status::timeout ? CAUSE_COMPLETION_FAILED : CAUSE_POST_REFUSED, q);
  a.posted[b] = m;
}

// One probe side on its own QP: puts into the other endpoint's landing word, polls its own.
template <gda::Sharing S>
struct GdaProbeSide {
  static constexpr Scope LANDING_SCOPE = Scope::gpu;  // the queues' buffers are GPU memory
  LoopbackTarget mine;
  const uint64_t* landing;
  __device__ bool send(uint64_t value, uint64_t* ticket) const {
    return gda::put_value<LoadPolicy, S>(mine.qp, value, 8, reinterpret_cast<uint64_t>(mine.dst), mine.rkey,
                                         gda::Completion::signaled, ticket) == gda::Status::ok;
  }
  __device__ bool retire(uint64_t ticket) const {
    return gda::wait_completion<LoadPolicy, S>(mine.qp, ticket) == gda::Status::ok;
  }
};

// A's put lands in A's probe QP's buffer, which B polls, and the other way round.
template <gda::Sharing S>
__device__ inline GdaProbeSide<S> probe_side(const LoadArgs& a, uint32_t endpoint) {
  const uint32_t mine = a.layout.probe(endpoint), theirs = a.layout.probe(1 - endpoint);
  return {a.targets[mine], reinterpret_cast<const uint64_t*>(a.targets[theirs].dst)};
}

// Launched with 2 + 2N blocks of 32 threads, all resident at once (2N <= 128 one-warp CTAs).
template <gda::Sharing ProbeSharing>
__global__ void load_kernel(LoadArgs a) {
  if (blockIdx.x >= 2) {
    background_warp(a, blockIdx.x - 2);
    return;
  }
  if (threadIdx.x != 0) return;
  if (blockIdx.x == 0) {
    ping(probe_side<ProbeSharing>(a, 0), a.probe, [&] { return background_posted(a); });
  } else {
    answer(probe_side<ProbeSharing>(a, 1), a.probe.stop,
           [&](uint32_t status) { load_failure(a, status, a.layout.probe(1)); });
  }
}

}  // namespace dissect::bench::gpu
