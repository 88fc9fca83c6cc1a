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
// The probe's loop is probe_kernel.cuh's (both paths share it); this file holds its mini-proxy side.
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
#include "probe_kernel.cuh"

namespace dissect::bench::gpu::proxy_load {

inline constexpr uint32_t PROXY_LOAD_LANDING = 0;     // the word each endpoint's probe side polls
inline constexpr uint32_t PROXY_LOAD_SOURCE = 1;      // the word each endpoint's probe side sends from
inline constexpr uint32_t PROXY_LOAD_BACKGROUND = 8;  // first background word; one 64 B line per producer

struct ProxyLoadArgs {
  const proxy::RingHandle* rings;  // one per ring of the layout
  QueueLayout layout;
  uint64_t* a;                     // endpoint A's and B's words (mapped host memory)
  uint64_t* b;
  double pace_period_ns;
  ProbePlan probe;                 // its stop flag ends the background too
  unsigned long long* posted;      // per producer: its last count
  uint32_t* failure;               // [status, ring]
};

__host__ __device__ inline uint64_t background_word(uint32_t b) {
  return PROXY_LOAD_BACKGROUND + uint64_t{b} * 8;  // b = e * producers + producer
}

__device__ inline void fail(const ProxyLoadArgs& a, uint32_t status, uint32_t ring) {
  if (atomicCAS(&a.failure[0], 0u, status) == 0) a.failure[1] = ring;
}

__device__ inline bool stopped(const ProxyLoadArgs& a) { return probe_stopped(a.probe.stop); }

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
      fail(a, CAUSE_POST_REFUSED, r);
      break;
    }
    ++count;
  }
  if (count > 0 && proxy::wait_completion(ring, index) != proxy::Status::ok) fail(a, CAUSE_COMPLETION_FAILED, r);
  a.posted[b] = count;
}

// One probe side on its ring: sends its source word into the other endpoint's landing word
// (window 0: A -> B, window 1: B -> A), polls its own.
template <proxy::Sharing S>
struct ProxyProbeSide {
  static constexpr Scope LANDING_SCOPE = Scope::system;  // the words are mapped host memory
  proxy::RingHandle ring;
  uint32_t window;
  uint64_t* words;  // this endpoint's
  const uint64_t* landing;
  __device__ bool send(uint64_t value, uint64_t* ticket) const {
    store_relaxed<Scope::system>(&words[PROXY_LOAD_SOURCE], value);  // ordered by the descriptor's release
    const proxy::Request request{proxy::Operation::write, window, 8, PROXY_LOAD_SOURCE * 8, PROXY_LOAD_LANDING * 8};
    return proxy::enqueue<proxy::tuned, S>(ring, request, ticket) == proxy::Status::ok;
  }
  __device__ bool retire(uint64_t ticket) const { return proxy::wait_completion(ring, ticket) == proxy::Status::ok; }
};

template <proxy::Sharing S>
__device__ inline ProxyProbeSide<S> probe_side(const ProxyLoadArgs& a, uint32_t endpoint) {
  uint64_t* words = endpoint == 0 ? a.a : a.b;
  return {a.rings[a.layout.probe(endpoint)], endpoint, words, &words[PROXY_LOAD_LANDING]};
}

// 2 + 2N blocks of one thread; a shared probe uses Sharing::shared as the ring's producers do.
template <proxy::Sharing ProbeSharing>
__global__ void proxy_load_kernel(ProxyLoadArgs a) {
  if (blockIdx.x >= 2) {
    producer(a, blockIdx.x - 2);
  } else if (blockIdx.x == 0) {
    ping(probe_side<ProbeSharing>(a, 0), a.probe, [&] { return background_completed(a); });
  } else {
    answer(probe_side<ProbeSharing>(a, 1), a.probe.stop, [&](uint32_t status) { fail(a, status, a.layout.probe(1)); });
  }
}

}  // namespace dissect::bench::gpu::proxy_load
