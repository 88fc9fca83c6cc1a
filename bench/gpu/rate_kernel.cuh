// The posting loop of the GPU message-rate experiments (gpu-rate, gpu-inline-rate): T threads in
// C CTAs drive Q loopback QPs (loopback_qps.h), each thread posting `messages_per_thread` writes
// with many outstanding, the last WQE of a post signalled every `signal_period` WQEs (periodic
// reclamation: reserve() polls the CQ when the ring is full), then a final drain. The QP's
// threads are consecutive and in one CTA, so the CTA's barrier ends their posting before one of
// them drains the QP.
//
// How the threads of one QP share it (Table 5), one kernel each:
//   exclusive    one thread per QP, counters in registers (gda::OwnedQp); batch = WQEs per doorbell;
//                or one thread driving several QPs in turn, counters in memory (2-32 QPs)
//   shared       each thread reserves its batch with an atomic and publishes it in reservation
//                order; the last reserver rings (NVSHMEM's rule (a)): Table 5's 2-32 threads
//   handoff      each thread posts one WQE at a time, reserved and published in order; the holder
//                of every batch-th slot rings under the doorbell lock: † at batch 1, ∗ at 32
//   cooperative  a warp reserves, builds and publishes `batch` WQEs with one doorbell: ‡
#pragma once

#include <cstdint>

#include "dissect/common/clock.h"
#include "dissect/gda/gda.h"
#include "loopback_qps.h"

namespace dissect::bench::gpu {

enum class RateSharing : uint32_t { exclusive, shared, handoff, cooperative };

// Where a message's payload comes from: a register (8 B and below, as nvshmem_p), the source
// buffer copied into the WQE (inline), or the source buffer named by a pointer WQE.
enum class RatePayload : uint32_t { value, inline_copy, pointer };

inline constexpr uint32_t RATE_SLOTS = 64;  // destination slots per QP: message m writes m % 64

struct RateArgs {
  const LoopbackTarget* targets;
  uint32_t threads_per_qp;       // one of these two is 1
  uint32_t qps_per_thread;
  uint32_t messages_per_thread;  // a multiple of batch (of batch / 32 per lane, cooperative)
  uint32_t batch;
  uint32_t signal_period;        // a multiple of batch
  RatePayload payload;
  uint32_t payload_bytes;
  unsigned long long* cta_start;  // per CTA, %globaltimer
  unsigned long long* cta_end;
  unsigned long long* cta_posted; // per CTA: its threads' last post, before the drain
  uint32_t* failure;              // [status, qp, SendQueueState::error], first failure only
};

DISSECT_HD inline uint64_t rate_value(uint64_t index, uint32_t qp) {
  return (index * 0x9e3779b97f4a7c15ull) ^ (uint64_t{qp} << 48) ^ 1;
}

__device__ inline void record_failure(const RateArgs& a, gda::Status s, uint32_t qp,
                                      const nic::QpHandle& handle) {
  if (atomicCAS(&a.failure[0], 0u, static_cast<uint32_t>(s)) == 0) {
    a.failure[1] = qp;
    a.failure[2] = handle.state->error;
  }
}

// Builds the write at WQEBB `index`, message index / wqebbs of its QP (the last of its post when
// `last`): payload by kind, slot message % RATE_SLOTS, signalled on a reclamation boundary or
// when it ends the thread's posting.
struct RateBuilder {
  const RateArgs& a;
  const LoopbackTarget& t;
  uint32_t qp;
  bool final_post;
  uint32_t wqebbs;

  __device__ gda::PostNote operator()(const nic::QpHandle& q, uint64_t index, bool last) const {
    const uint64_t message = index / wqebbs;
    const bool signal = last && (final_post || (message + 1) % a.signal_period == 0);
    const auto c = signal ? gda::Completion::signaled : gda::Completion::unsignaled;
    const uint64_t slot = (message % RATE_SLOTS) * a.payload_bytes;
    const uint64_t remote = reinterpret_cast<uint64_t>(t.dst + slot);
    if (a.payload == RatePayload::value) {
      return gda::write_rdma_write_value_wqe(q, index, rate_value(message, qp), a.payload_bytes, remote,
                                      t.rkey, c);
    } else if (a.payload == RatePayload::inline_copy) {
      return gda::write_rdma_write_inline_wqe(
          q, index, gda::InlineWriteRequest{t.src + slot, a.payload_bytes, remote, t.rkey}, c);
    } else {
      return gda::write_rdma_write_wqe(
          q, index,
          gda::WriteRequest{reinterpret_cast<uint64_t>(t.src + slot), t.lkey, a.payload_bytes,
                            remote, t.rkey},
          c);
    }
  }
};

__device__ inline uint32_t rate_wqebbs(const RateArgs& a) {
  return a.payload == RatePayload::pointer ? gda::write_wqebbs()
                                           : gda::inline_write_wqebbs(a.payload_bytes);
}

// The ordering policies (gda/ordering.h): GPU scope for the engine kernel reading GPU-resident
// queues and doorbells; system scope when a host thread forwards the doorbell (cpu-assisted: the
// host observes the mailbox store, nic.h): one system-scope release fence a doorbell.
using DirectPolicy = gda::ordering::gpu_fence;
using CpuAssistedPolicy = gda::ordering::system_release_fence;

inline constexpr uint32_t MAX_QPS_PER_THREAD = 32;

// One thread driving QPs first .. first + qps_per_thread - 1 in turn, one post each, each QP's
// counters in an OwnedQp (local memory, L1-resident) as the one-QP thread keeps them in registers.
template <typename RatePolicy>
__device__ gda::Status post_round_robin(const RateArgs& a, uint32_t first, unsigned long long* posted) {
  const uint32_t k = a.qps_per_thread, w = rate_wqebbs(a);
  const uint32_t posts = a.messages_per_thread / a.batch;  // a multiple of k
  gda::OwnedQp owned[MAX_QPS_PER_THREAD];
  for (uint32_t j = 0; j < k; ++j) owned[j] = gda::own(a.targets[first + j].qp);
  gda::Status s = gda::Status::ok;
  uint64_t end = 0;
  for (uint32_t p = 0; p < posts && s == gda::Status::ok; ++p) {
    const uint32_t j = p % k;
    const LoopbackTarget& t = a.targets[first + j];
    const RateBuilder build{a, t, first + j, p + k >= posts, w};
    s = gda::post_batch<RatePolicy, gda::Sharing::exclusive>(
        owned[j], a.batch, w, gda::Completion::unsignaled, &end,
        [&](const nic::QpHandle& q, uint64_t index, uint32_t i, gda::Completion) {
          return build(q, index, i + 1 == a.batch);
        });
  }
  *posted = now_ns();
  for (uint32_t j = 0; j < k && s == gda::Status::ok; ++j) {
    s = gda::quiet<RatePolicy>(owned[j]);
    if (s != gda::Status::ok) record_failure(a, s, first + j, owned[j].qp);
  }
  return s;
}

// One thread's (or, cooperative, one warp's) posting; returns its first failure. *posted: the time
// of its last post, before an exclusive thread drains its QPs.
template <RateSharing K, typename RatePolicy>
__device__ gda::Status post_messages(const RateArgs& a, const LoopbackTarget& t, uint32_t qp,
                                     unsigned long long* posted) {
  constexpr auto kShared = gda::Sharing::shared;
  const uint32_t w = rate_wqebbs(a);
  gda::Status s = gda::Status::ok;
  uint64_t end = 0;
  if constexpr (K == RateSharing::exclusive) {
    if (a.qps_per_thread > 1) return post_round_robin<RatePolicy>(a, qp, posted);
    gda::OwnedQp owned = gda::own(t.qp);
    const uint32_t posts = a.messages_per_thread / a.batch;
    for (uint32_t p = 0; p < posts && s == gda::Status::ok; ++p) {
      const RateBuilder build{a, t, qp, p + 1 == posts, w};
      s = gda::post_batch<RatePolicy, gda::Sharing::exclusive>(
          owned, a.batch, w, gda::Completion::unsignaled, &end,
          [&](const nic::QpHandle& q, uint64_t index, uint32_t i, gda::Completion) {
            return build(q, index, i + 1 == a.batch);
          });
    }
    *posted = now_ns();
    if (s == gda::Status::ok) s = gda::quiet<RatePolicy>(owned);
    return s;
  } else if constexpr (K == RateSharing::shared) {
    const uint32_t posts = a.messages_per_thread / a.batch;
    for (uint32_t p = 0; p < posts && s == gda::Status::ok; ++p) {
      const RateBuilder build{a, t, qp, p + 1 == posts, w};
      s = gda::post_batch<RatePolicy, kShared>(
          t.qp, a.batch, w, gda::Completion::unsignaled, &end,
          [&](const nic::QpHandle& q, uint64_t index, uint32_t i, gda::Completion) {
            return build(q, index, i + 1 == a.batch);
          });
    }
  } else if constexpr (K == RateSharing::handoff) {
    for (uint32_t m = 0; m < a.messages_per_thread && s == gda::Status::ok; ++m) {
      uint64_t base = 0;
      s = gda::reserve<RatePolicy, kShared>(t.qp, w, &base);
      if (s != gda::Status::ok) break;
      const bool final_post = m + 1 == a.messages_per_thread;
      gda::note_post<RatePolicy>(t.qp, base, RateBuilder{a, t, qp, final_post, w}(t.qp, base, true));
      s = gda::publish<kShared>(t.qp, base, w);
      if (s == gda::Status::ok && (final_post || (base / w + 1) % a.batch == 0)) {
        s = gda::ring<RatePolicy, kShared>(t.qp);
      }
    }
  } else {
    const uint32_t posts = a.messages_per_thread * 32 / a.batch;
    const bool alone = a.threads_per_qp == 32;
    for (uint32_t p = 0; p < posts && s == gda::Status::ok; ++p) {
      const RateBuilder build{a, t, qp, p + 1 == posts, w};
      auto one = [&](const nic::QpHandle& q, uint64_t index, uint32_t i, gda::Completion) {
        return build(q, index, i + 1 == a.batch);
      };
      s = alone ? gda::post_cooperative<RatePolicy, gda::Sharing::exclusive>(
                      gda::Warp{}, t.qp, a.batch, w, gda::Completion::unsignaled, &end, one)
                : gda::post_cooperative<RatePolicy, kShared>(
                      gda::Warp{}, t.qp, a.batch, w, gda::Completion::unsignaled, &end, one);
    }
  }
  *posted = now_ns();
  return s;
}

template <RateSharing K, typename RatePolicy>
__global__ void rate_kernel(RateArgs a) {
  const uint32_t thread = blockIdx.x * blockDim.x + threadIdx.x;
  const uint32_t qp = a.qps_per_thread > 1 ? thread * a.qps_per_thread : thread / a.threads_per_qp;
  const LoopbackTarget t = a.targets[qp];
  __shared__ unsigned long long last_post;
  if (threadIdx.x == 0) last_post = 0;
  __syncthreads();
  if (threadIdx.x == 0) a.cta_start[blockIdx.x] = now_ns();
  unsigned long long posted = 0;
  gda::Status s = post_messages<K, RatePolicy>(a, t, qp, &posted);
  atomicMax(&last_post, posted);
  __syncthreads();  // every thread of this CTA's QPs has posted everything
  if (threadIdx.x == 0) a.cta_posted[blockIdx.x] = last_post;
  if (K != RateSharing::exclusive && thread % a.threads_per_qp == 0 && s == gda::Status::ok) {
    s = gda::quiet<RatePolicy, gda::Sharing::shared>(t.qp);
  }
  if (s != gda::Status::ok) record_failure(a, s, qp, t.qp);
  __syncthreads();
  if (threadIdx.x == 0) a.cta_end[blockIdx.x] = now_ns();
}

}  // namespace dissect::bench::gpu
