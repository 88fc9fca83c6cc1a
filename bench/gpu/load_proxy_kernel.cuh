// gpu-load, mini-proxy, the kernel: GPU producers into mini-proxy rings served by T host workers on the
// softnic host engine (proxy_cuda_rig.h), one launch holding the probe and the background:
//
//   block 0   the pinger (endpoint A): stores i into A's source word, enqueues its 8 B write
//             (window 0) on its ring, waits for the reply in A's landing word; the round trip in
//             clock64 cycles; the request's completion is awaited outside the span
//   block 1   the responder (endpoint B): waits for i in B's landing word, answers it (window 1)
//   blocks 2..  background producers, one thread each: endpoint e stores its running count into
//             its source word and enqueues an 8 B write of it to the other endpoint, back to back
//             (or paced), on ring e * K + producer % K, until the pinger raises `stop`
//
// Rings: K background rings per endpoint, shared by their producers (Sharing::shared, the tuned
// handoff's 16 B release store); the probe shares its endpoint's first ring or has a private one
// (2K, 2K + 1) served by the same workers (ring r by worker r % T) with the same batch B.
//
// Payload validation: every background destination word holds its producer's last count, and both
// probe landing words the last request.
#pragma once

#include <cstdint>

#include "dissect/bench/gpu_load_plan.h"
#include "dissect/common/clock.h"
#include "dissect/proxy/handoff.h"
#include "harness.cuh"

namespace dissect::bench::gpu::proxy_load {

inline constexpr uint32_t PROXY_LOAD_LANDING = 0;     // the word each endpoint's probe side polls
inline constexpr uint32_t PROXY_LOAD_SOURCE = 1;      // the word each endpoint's probe side sends from
inline constexpr uint32_t PROXY_LOAD_BACKGROUND = 8;  // first background word; one 64 B line per producer
inline constexpr uint64_t PROXY_LOAD_POLL_TIMEOUT_NS = 10'000'000'000ull;

enum ProxyLoadStatus : uint32_t { proxy_ok = 0, enqueue_failed = 1, completion_failed = 2, reply_timeout = 3,
                                  request_timeout = 4 };

struct ProxyWindow {
  unsigned long long start_ns, end_ns, completed_start, completed_end;
  uint32_t samples, status;
  Timer timer;
};

struct ProxyLoadArgs {
  const proxy::RingHandle* rings;  // one per ring of the layout
  QueueLayout layout;
  uint64_t* a;                     // endpoint A's and B's words (mapped host memory)
  uint64_t* b;
  double pace_period_ns;
  uint64_t ramp_ns, budget_ns;
  uint32_t warmup, iterations;
  unsigned long long* round_trip;
  ProxyWindow* window;
  uint32_t* stop;
  unsigned long long* posted;      // per producer: its last count
  uint32_t* failure;               // [status, ring]
};

__host__ __device__ inline uint64_t background_word(uint32_t b) {
  return PROXY_LOAD_BACKGROUND + uint64_t{b} * 8;  // b = e * producers + producer
}

__device__ inline void fail(const ProxyLoadArgs& a, uint32_t status, uint32_t ring) {
  if (atomicCAS(&a.failure[0], 0u, status) == 0) a.failure[1] = ring;
}

__device__ inline bool stopped(const ProxyLoadArgs& a) { return load_acquire<Scope::gpu>(a.stop) != 0; }

__device__ inline uint64_t background_completed(const ProxyLoadArgs& a) {
  uint64_t n = 0;
  for (uint32_t r = 0; r < 2 * a.layout.per_endpoint; ++r) n += load_acquire<Scope::system>(a.rings[r].completed);
  return n;
}

__device__ inline void producer(const ProxyLoadArgs& a, uint32_t b) {
  const uint32_t endpoint = b / a.layout.producers, p = b % a.layout.producers;
  const uint32_t r = a.layout.background(endpoint, p);
  const proxy::RingHandle ring = a.rings[r];
  const uint64_t word = background_word(b);
  uint64_t* source = (endpoint == 0 ? a.a : a.b) + word;
  const proxy::Request request{proxy::Operation::write, endpoint, 8, static_cast<uint32_t>(word * 8), word * 8};
  PaceSchedule pace(now_ns(), a.pace_period_ns);
  uint64_t count = 0, index = 0;
  while (!stopped(a)) {
    while (!pace.due(now_ns()) && !stopped(a)) {
    }
    pace.started(now_ns());
    store_relaxed<Scope::system>(source, count + 1);  // ordered by the descriptor's release store
    if (proxy::enqueue<proxy::tuned, proxy::Sharing::shared>(ring, request, &index) != proxy::Status::ok) {
      fail(a, enqueue_failed, r);
      break;
    }
    ++count;
  }
  if (count > 0 && proxy::wait_completion(ring, index) != proxy::Status::ok) fail(a, completion_failed, r);
  a.posted[b] = count;
}

__device__ inline bool await_word(const uint64_t* word, uint64_t value, const ProxyLoadArgs& a, bool watch_stop) {
  const uint64_t began = now_ns();
  while (load_acquire<Scope::system>(word) != value) {
    if (watch_stop && stopped(a)) return false;
    if (now_ns() - began > PROXY_LOAD_POLL_TIMEOUT_NS) return false;
  }
  return true;
}

// Sends `value` from `from`'s source word into the other endpoint's landing word.
template <proxy::Sharing S>
__device__ inline bool send(const proxy::RingHandle& ring, uint32_t window, uint64_t* from, uint64_t value, uint64_t* index) {
  store_relaxed<Scope::system>(&from[PROXY_LOAD_SOURCE], value);
  const proxy::Request request{proxy::Operation::write, window, 8, PROXY_LOAD_SOURCE * 8, PROXY_LOAD_LANDING * 8};
  return proxy::enqueue<proxy::tuned, S>(ring, request, index) == proxy::Status::ok;
}

template <proxy::Sharing S>
__device__ inline void pinger(const ProxyLoadArgs& a) {
  const uint32_t r = a.layout.probe(0);
  const proxy::RingHandle ring = a.rings[r];
  const uint64_t g0 = now_ns();
  const long long c0 = clock64();
  while (now_ns() - g0 < a.ramp_ns) {
  }
  ProxyWindow w{};
  uint32_t status = proxy_ok;
  for (uint32_t i = 0; i < a.warmup + a.iterations && status == proxy_ok; ++i) {
    if (i == a.warmup) {
      w.start_ns = now_ns();
      w.completed_start = background_completed(a);
    }
    uint64_t index = 0;
    const long long ca = clock64();
    if (!send<S>(ring, 0, a.a, uint64_t{i} + 1, &index)) status = enqueue_failed;
    else if (!await_word(&a.a[PROXY_LOAD_LANDING], uint64_t{i} + 1, a, false)) status = reply_timeout;
    const long long cb = clock64();
    if (status == proxy_ok && proxy::wait_completion(ring, index) != proxy::Status::ok) status = completion_failed;
    if (status != proxy_ok || i < a.warmup) continue;
    a.round_trip[w.samples++] = static_cast<unsigned long long>(cb - ca);
    if (now_ns() - w.start_ns > a.budget_ns) break;
  }
  w.end_ns = now_ns();
  w.completed_end = background_completed(a);
  store_release<Scope::gpu>(a.stop, 1u);
  w.timer.cycles = static_cast<unsigned long long>(clock64() - c0);
  w.timer.ns = now_ns() - g0;
  w.status = status;
  *a.window = w;
}

template <proxy::Sharing S>
__device__ inline void responder(const ProxyLoadArgs& a) {
  const uint32_t r = a.layout.probe(1);
  const proxy::RingHandle ring = a.rings[r];
  for (uint64_t i = 1;; ++i) {
    if (!await_word(&a.b[PROXY_LOAD_LANDING], i, a, true)) {
      if (!stopped(a)) fail(a, request_timeout, r);
      return;
    }
    uint64_t index = 0;
    if (!send<S>(ring, 1, a.b, i, &index) || proxy::wait_completion(ring, index) != proxy::Status::ok) {
      fail(a, enqueue_failed, r);
      return;
    }
  }
}

// 2 + 2N blocks of one thread; a shared probe uses Sharing::shared as the ring's producers do.
template <proxy::Sharing ProbeSharing>
__global__ void proxy_load_kernel(ProxyLoadArgs a) {
  if (blockIdx.x >= 2) producer(a, blockIdx.x - 2);
  else if (blockIdx.x == 0) pinger<ProbeSharing>(a);
  else responder<ProbeSharing>(a);
}

}  // namespace dissect::bench::gpu::proxy_load
