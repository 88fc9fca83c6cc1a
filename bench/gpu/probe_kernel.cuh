// gpu-load's probe (Figure 6), the same on both paths: the pinger (endpoint A) sends request i,
// waits for reply i in its landing word and times the round trip in clock64 cycles, retiring its
// request outside the span; the responder (endpoint B) waits for request i in its landing word and
// answers i. The paths differ only in how a side sends and retires (a Side):
//
//   bool send(uint64_t value, uint64_t* ticket)   posts `value` to the other endpoint's landing word
//   bool retire(uint64_t ticket)                  waits for that post's completion
//   const uint64_t* landing                       this side's landing word
//   static constexpr Scope LANDING_SCOPE           the scope its loads need (GPU or mapped host memory)
//
// load_kernel.cuh (mini-gda) and load_proxy_kernel.cuh (mini-proxy) hold the sides and the
// background; this file holds what a probe does and what it reports.
#pragma once

#include <cstdint>
#include <string>

#include "dissect/bench/gpu_load_plan.h"
#include "dissect/common/atomic.h"
#include "dissect/common/clock.h"
#include "dissect/common/wait.h"
#include "harness.cuh"
#include "load.h"

namespace dissect::bench::gpu {

inline constexpr uint64_t PROBE_POLL_TIMEOUT_NS = 10'000'000'000ull;

// A probe's status is a KernelCause (harness.cuh): CAUSE_POST_REFUSED, CAUSE_COMPLETION_FAILED,
// CAUSE_REPLY_TIMEOUT (the pinger), CAUSE_REQUEST_TIMEOUT (the responder); this names the step.
inline std::string probe_status_text(uint32_t s) {
  switch (s) {
    case CAUSE_NONE: return "ok";
    case CAUSE_POST_REFUSED: return "posting";
    case CAUSE_COMPLETION_FAILED: return "completion";
    case CAUSE_REPLY_TIMEOUT: return "waiting for the reply (10 s)";
    case CAUSE_REQUEST_TIMEOUT: return "waiting for the request (10 s)";
    default: return "status " + std::to_string(s);
  }
}

// What the pinger reports: the window it measured and the background carried over it.
struct ProbeWindow {
  unsigned long long start_ns, end_ns;                // first and last recorded round trip
  unsigned long long completed_start, completed_end;  // background messages carried by then
  uint32_t samples;                                   // round trips recorded
  uint32_t status;
  Timer timer;                                        // the pinger's span on both clocks
};

// The pinger's schedule and outputs.
struct ProbePlan {
  uint64_t ramp_ns;    // background alone before the first ping
  uint64_t budget_ns;  // the probe stops after this (or warmup + iterations)
  uint32_t warmup, iterations;
  unsigned long long* round_trip;  // `iterations` cycles
  ProbeWindow* window;
  uint32_t* stop;                  // raised by the pinger when it is done
};

// The pinger's plan from gpu-load's config; `device_bytes(n)` returns n zeroed bytes of the run's
// device memory for its outputs.
template <typename DeviceBytes>
inline ProbePlan probe_plan(const LoadConfig& c, const QueueLayout& l, DeviceBytes&& device_bytes) {
  ProbePlan p{};
  p.ramp_ns = l.producers ? c.ramp_ns : 0;  // no background to ramp up
  p.budget_ns = c.budget_ns;
  p.warmup = c.warmup;
  p.iterations = c.iterations;
  p.round_trip = static_cast<unsigned long long*>(device_bytes(8 * size_t{c.iterations}));
  p.window = static_cast<ProbeWindow*>(device_bytes(sizeof(ProbeWindow)));
  p.stop = static_cast<uint32_t*>(device_bytes(8));
  return p;
}

__device__ inline bool probe_stopped(const uint32_t* stop) { return load_acquire<Scope::gpu>(stop) != 0; }

// Until *word == value; false once PROBE_POLL_TIMEOUT_NS has passed (common/wait.h's one bound)
// or, when `stop` is given, once it is raised. The pinger's wait is inside the timed round trip,
// so the bound is checked with over() and the loop spins bare (expired() would sleep 32 ns a
// check).
template <Scope S>
__device__ inline bool await_word(const uint64_t* word, uint64_t value, const uint32_t* stop) {
  BoundedWait wait(PROBE_POLL_TIMEOUT_NS);
  while (load_acquire<S>(word) != value) {
    if (stop != nullptr && probe_stopped(stop)) return false;
    if (wait.over()) return false;
  }
  return true;
}

// `carried()`: background messages carried so far, read at the window's two edges.
template <typename Side, typename Carried>
__device__ inline void ping(const Side& side, const ProbePlan& p, Carried&& carried) {
  const uint64_t g0 = now_ns();
  const long long c0 = clock64();
  while (now_ns() - g0 < p.ramp_ns) {
  }
  ProbeWindow w{};
  uint32_t status = CAUSE_NONE;
  for (uint32_t i = 0; i < p.warmup + p.iterations && status == CAUSE_NONE; ++i) {
    if (i == p.warmup) {
      w.start_ns = now_ns();
      w.completed_start = carried();
    }
    uint64_t ticket = 0;
    const long long ca = clock64();
    if (!side.send(uint64_t{i} + 1, &ticket)) status = CAUSE_POST_REFUSED;
    else if (!await_word<Side::LANDING_SCOPE>(side.landing, uint64_t{i} + 1, nullptr)) status = CAUSE_REPLY_TIMEOUT;
    const long long cb = clock64();
    if (status == CAUSE_NONE && !side.retire(ticket)) status = CAUSE_COMPLETION_FAILED;
    if (status != CAUSE_NONE || i < p.warmup) continue;
    p.round_trip[w.samples++] = static_cast<unsigned long long>(cb - ca);
    if (now_ns() - w.start_ns > p.budget_ns) break;
  }
  w.end_ns = now_ns();
  w.completed_end = carried();
  store_release<Scope::gpu>(p.stop, 1u);
  w.timer.cycles = static_cast<unsigned long long>(clock64() - c0);
  w.timer.ns = now_ns() - g0;
  w.status = status;
  *p.window = w;
}

// Answers until the pinger stops; `fail(status)` on a timeout or a failed post.
template <typename Side, typename Fail>
__device__ inline void answer(const Side& side, const uint32_t* stop, Fail&& fail) {
  for (uint64_t i = 1;; ++i) {
    if (!await_word<Side::LANDING_SCOPE>(side.landing, i, stop)) {
      if (!probe_stopped(stop)) fail(CAUSE_REQUEST_TIMEOUT);
      return;
    }
    uint64_t ticket = 0;
    if (!side.send(i, &ticket) || !side.retire(ticket)) {
      fail(CAUSE_POST_REFUSED);
      return;
    }
  }
}

}  // namespace dissect::bench::gpu
