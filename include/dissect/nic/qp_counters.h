// Per-QP telemetry counter block and the data-path hooks that update it. It sits in the nic
// layer (DESIGN.md: "the per-QP telemetry counter block and its hooks live here too"), under the
// submit path that updates it and the NIC models that own it; telemetry's session, registry and
// JSON are above and only read it. Its names stay in dissect::telemetry, the vocabulary.
//
// Contract
// - Who calls: the transports. softnic and mini-proxy workers call the hooks from host threads on a
//   block in host memory; mini-gda kernels call the same hooks from GPU threads on a block in GPU
//   memory. The hooks are `DISSECT_HD` inline functions and compile with and without nvcc.
// - Which slot: a transport resolves its QP's block once, at QP creation (Registry::track_qp), and
//   keeps the pointer next to the QP. Nothing on the data path looks a slot up.
// - Null slot: every hook takes the block by pointer and returns at once on null. A QP that got no
//   slot (telemetry off, or the tables were full) therefore never tests anything before calling.
// - Threads: any number of threads may update one block concurrently through the per-event hooks
//   (on_post, on_doorbell, on_completion*, ...): each update is a relaxed atomic read-modify-write.
//   The counters are only read after the traffic is over (at finalise, or by the sampler, which
//   tolerates a count that is a few WQEs stale), so no ordering against other memory is needed,
//   only indivisibility. on_rung() / on_rung_sizes() are the exception: their fields have one
//   writer (the QP's ringer) and are updated without a locked instruction; mini-gda uses them
//   (nic/telemetry_policy.h) and a block fed by them must not also be fed by on_post/on_doorbell.
//   The completion-side hooks (on_completions, record_latency_sample, on_cq_poll, on_cq_error)
//   take Writers::one where one thread alone drains the QP's send CQ (an exclusive mini-gda QP):
//   the same single-writer adds; Writers::many (the default) otherwise.
// - GPU memory: a block in GPU memory is updated with device-scope atomics and copied back when
//   the PE finalises, then folded into the host slot with merge_from(); softnic/gpu_slot.h does
//   both for a QP. A block in host-mapped memory updated by the GPU while the host also updates it
//   is not supported (device-scope atomics do not order against host atomics).
// - Latency: on_post() says whether this WQE is in the 1-in-N latency sample. Only then does the
//   caller read its clock and keep the stamp with the WQE (a zero stamp means "not sampled").
//   Completion latency is measured by the caller's clock (CLOCK_MONOTONIC on the host, %globaltimer
//   on the GPU: both in ns); clock_ns() below reads the right one for the side it runs on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "dissect/common/atomic.h"
#include "dissect/common/clock.h"
#include "dissect/mlx5/endian.h"
#include "dissect/mlx5/wqe.h"

namespace dissect::telemetry {

inline constexpr uint32_t kCountersLayoutVersion = 1;
inline constexpr uint32_t kMaxHistogramBuckets = 16;
// Payload-size buckets: bucket b holds sizes in (2^(b-1), 2^b] bytes, bucket 0 holds 0 and 1.
inline constexpr uint32_t kWqeSizeBuckets = 32;
// A latency sample stamp of zero means the WQE was not sampled.
inline constexpr uint64_t kNotSampled = 0;

// One QP's counters. Plain data: trivially copyable, size-pinned, the same bytes on host and GPU.
// The first cache line is read-only after initialise_counters(): it carries what the hooks need to
// know about the configuration, so a GPU hook needs nothing but this pointer.
struct alignas(64) QpCounters {
  // --- line 0: identity and configuration (written once at slot creation) ---
  uint32_t layout_version;
  uint32_t qp_number;
  uint64_t sample_mask;        // N - 1; N is the 1-in-N latency sample interval, a power of two
  uint32_t histogram_buckets;  // 1..kMaxHistogramBuckets
  uint32_t reserved0;
  uint64_t histogram_interval_ns;
  uint64_t bucket_multiplier;  // floor(2^63 / interval) + 1: bucket = (latency * multiplier) >> 63
  uint64_t last_bucket_ns;     // (buckets - 1) * interval: latencies at or above go to the last bucket
  uint64_t reserved1[2];

  // --- counters (every field an event count, bytes, or an extreme) ---
  uint64_t num_wqe_sent;       // send WQEs posted (mini-gda: counted when rung)
  uint64_t num_recv_wqe;       // receive WQEs posted
  uint64_t num_wqe_rcvd;       // CQEs drained from the CQ, send and receive alike
  uint64_t num_wqe_completed;  // CQEs matched to a posting of ours
  uint64_t num_write_wqe;      // MLX5_OPCODE_RDMA_WRITE postings
  uint64_t num_write_imm_wqe;  // MLX5_OPCODE_RDMA_WRITE_IMM postings
  uint64_t num_wqebb;          // 64-byte basic blocks the posted WQEs occupied in the send ring
  uint64_t tx_bytes;           // payload bytes posted for sending
  uint64_t rx_bytes;           // payload bytes received (receive completions)
  uint64_t num_cq_errors;      // CQEs drained with an error status
  uint64_t cq_poll_count;      // CQ polls charged to this QP
  uint64_t num_doorbells;      // doorbells rung
  uint64_t doorbell_wqes;      // WQEs announced by those doorbells (sum)
  uint64_t doorbell_wqes_min;  // fewest WQEs in one doorbell; UINT64_MAX when none rung
  uint64_t doorbell_wqes_max;
  uint64_t wqe_completion_ns_min;  // over the sampled completions; UINT64_MAX when none sampled
  uint64_t wqe_completion_ns_max;
  uint64_t reserved2[7];

  uint64_t wqe_completion_histogram[kMaxHistogramBuckets];  // sampled completions per bucket
  uint64_t wqe_size_histogram[kWqeSizeBuckets];             // posted send WQEs per payload-size bucket
};

static_assert(std::is_trivially_copyable_v<QpCounters>);
static_assert(std::is_standard_layout_v<QpCounters>);
static_assert(sizeof(QpCounters) == 640, "QpCounters is shared with GPU code: bump the layout version");
static_assert(offsetof(QpCounters, num_wqe_sent) == 64);
static_assert(offsetof(QpCounters, wqe_completion_histogram) == 256);

// Counters that belong to a channel rather than a QP. num_req_completed counts requests, not WQEs
// (one request may span several WQEs and QPs), so no sum over QP slots produces it: it is stored.
struct alignas(64) ChannelCounters {
  uint64_t num_req_completed;
  uint64_t reserved[7];
};
static_assert(std::is_trivially_copyable_v<ChannelCounters>);
static_assert(sizeof(ChannelCounters) == 64);

// What a post hook needs to know about one send WQE.
struct PostInfo {
  uint64_t payload_bytes;
  uint8_t opcode;        // mlx5_opcode
  uint32_t wqe_bytes;    // the WQE's own size (ds * 16); rounded up to WQEBBs when counted
};

// Who updates a group of fields: one thread (single-writer adds, no locked instruction on the
// host) or any number (relaxed atomic read-modify-writes).
enum class Writers { one, many };

namespace detail {

// An add by the field's only writer (readers use relaxed loads). On the host a relaxed load and
// store: no lock prefix, which is what makes it cheaper than fetch_add. On the GPU an
// atomicAdd whose result is unused compiles to a fire-and-forget RED, cheaper than a load that
// waits for L2 and then a store.
DISSECT_HD inline void owned_add(uint64_t* target, uint64_t value) {
#if defined(__CUDA_ARCH__)
  atomicAdd(reinterpret_cast<unsigned long long*>(target), static_cast<unsigned long long>(value));
#else
  __atomic_store_n(target, __atomic_load_n(target, __ATOMIC_RELAXED) + value, __ATOMIC_RELAXED);
#endif
}

DISSECT_HD inline void owned_min(uint64_t* target, uint64_t value) {
#if defined(__CUDA_ARCH__)
  atomicMin(reinterpret_cast<unsigned long long*>(target), static_cast<unsigned long long>(value));
#else
  if (value < __atomic_load_n(target, __ATOMIC_RELAXED)) __atomic_store_n(target, value, __ATOMIC_RELAXED);
#endif
}

DISSECT_HD inline void owned_max(uint64_t* target, uint64_t value) {
#if defined(__CUDA_ARCH__)
  atomicMax(reinterpret_cast<unsigned long long*>(target), static_cast<unsigned long long>(value));
#else
  if (value > __atomic_load_n(target, __ATOMIC_RELAXED)) __atomic_store_n(target, value, __ATOMIC_RELAXED);
#endif
}

template <Writers W>
DISSECT_HD inline void add(uint64_t* target, uint64_t value) {
  if constexpr (W == Writers::one) owned_add(target, value);
  else add_relaxed<Scope::gpu>(target, value);
}
template <Writers W>
DISSECT_HD inline void keep_min(uint64_t* target, uint64_t value) {
  if constexpr (W == Writers::one) owned_min(target, value);
  else fetch_min<Scope::gpu>(target, value);
}
template <Writers W>
DISSECT_HD inline void keep_max(uint64_t* target, uint64_t value) {
  if constexpr (W == Writers::one) owned_max(target, value);
  else fetch_max<Scope::gpu>(target, value);
}

// floor(a * b / 2^63) for a product below 2^127.
DISSECT_HD inline uint64_t multiply_shift_63(uint64_t a, uint64_t b) {
#if defined(__CUDA_ARCH__)
  uint64_t high = __umul64hi(a, b);
  uint64_t low = a * b;
  return (high << 1) | (low >> 63);
#else
  return static_cast<uint64_t>((static_cast<unsigned __int128>(a) * b) >> 63);
#endif
}

// Index of the highest set bit plus one (0 for 0): the payload-size bucket of ceil-log2 sizes.
DISSECT_HD inline uint32_t size_bucket(uint64_t bytes) {
  if (bytes <= 1) return 0;
#if defined(__CUDA_ARCH__)
  uint32_t bucket = 64 - __clzll(static_cast<long long>(bytes - 1));
#else
  uint32_t bucket = 64 - __builtin_clzll(bytes - 1);
#endif
  return bucket < kWqeSizeBuckets ? bucket : kWqeSizeBuckets - 1;
}

}  // namespace detail

// Which histogram bucket a latency falls in: floor(latency / interval), clamped to the last bucket.
// The multiplier is exact while latency * interval < 2^63 (multiplier * interval = 2^63 + e with
// 1 <= e <= interval, so the error term stays below one bucket); latencies that reach the last
// bucket are clamped before the multiply, and the configuration bounds the interval so that every
// latency below the last bucket satisfies that condition.
DISSECT_HD inline uint32_t latency_bucket(const QpCounters& qp, uint64_t latency_ns) {
  if (latency_ns >= qp.last_bucket_ns) return qp.histogram_buckets - 1;
  return static_cast<uint32_t>(detail::multiply_shift_63(latency_ns, qp.bucket_multiplier));
}

// The clock latencies are measured with (common/clock.h's now_ns()), made odd so that a stamp is
// never kNotSampled (0).
DISSECT_HD inline uint64_t clock_ns() { return now_ns() | 1; }

// --- hooks: call sites never test the pointer first ---

// A send WQE was written to the ring. Returns true when the WQE is in the latency sample: the
// caller then stamps it with clock_ns() and hands the stamp to on_completion_stamped().
// One atomic add both counts the WQE and draws its sequence number, so selection is by posting
// position (unbiased in latency) and exact: ceil(sent / N) WQEs are sampled.
DISSECT_HD inline bool on_post(QpCounters* qp, const PostInfo& post) {
  if (qp == nullptr) return false;
  uint64_t sequence = fetch_add<Scope::gpu>(&qp->num_wqe_sent, uint64_t{1});
  add_relaxed<Scope::gpu>(&qp->tx_bytes, post.payload_bytes);
  add_relaxed<Scope::gpu>(&qp->num_wqebb,
                          (post.wqe_bytes + mlx5::MLX5_SEND_WQE_BB - 1) / mlx5::MLX5_SEND_WQE_BB);
  add_relaxed<Scope::gpu>(&qp->wqe_size_histogram[detail::size_bucket(post.payload_bytes)], 1);
  if (post.opcode == mlx5::MLX5_OPCODE_RDMA_WRITE) {
    add_relaxed<Scope::gpu>(&qp->num_write_wqe, 1);
  } else if (post.opcode == mlx5::MLX5_OPCODE_RDMA_WRITE_IMM) {
    add_relaxed<Scope::gpu>(&qp->num_write_imm_wqe, 1);
  }
  return (sequence & qp->sample_mask) == 0;
}

// A receive WQE was posted.
DISSECT_HD inline void on_recv_posted(QpCounters* qp, uint64_t count = 1) {
  if (qp == nullptr) return;
  add_relaxed<Scope::gpu>(&qp->num_recv_wqe, count);
}

// A doorbell announcing `wqes` new WQEs was rung (one ring of the doorbell register, whatever
// number of doorbell-record updates preceded it).
DISSECT_HD inline void on_doorbell(QpCounters* qp, uint64_t wqes) {
  if (qp == nullptr) return;
  add_relaxed<Scope::gpu>(&qp->num_doorbells, 1);
  add_relaxed<Scope::gpu>(&qp->doorbell_wqes, wqes);
  fetch_min<Scope::gpu>(&qp->doorbell_wqes_min, wqes);
  fetch_max<Scope::gpu>(&qp->doorbell_wqes_max, wqes);
}

// What one doorbell announced, summed by its ringer over the WQEs it covers.
struct DoorbellTally {
  uint64_t wqes = 0;
  uint64_t payload_bytes = 0;
  uint64_t wqebbs = 0;
  uint64_t writes = 0;      // MLX5_OPCODE_RDMA_WRITE
  uint64_t write_imms = 0;  // MLX5_OPCODE_RDMA_WRITE_IMM
};

// The batch form of on_post() + on_doorbell(), for a transport whose doorbells on one QP are rung
// by one thread at a time (mini-gda: the exclusive submitter, or the holder of post_lock). It
// counts the posts when they are rung, with owned (single-writer) adds: no locked instruction per
// WQE on the host. A slot updated through this hook must not also be updated through on_post() or
// on_doorbell() (their atomic adds would race with the owned ones). The payload-size histogram is
// fed by on_rung_size() from the same thread.
DISSECT_HD inline void on_rung(QpCounters* qp, const DoorbellTally& t) {
  if (qp == nullptr) return;
  detail::owned_add(&qp->num_wqe_sent, t.wqes);
  detail::owned_add(&qp->doorbell_wqes, t.wqes);
  detail::owned_add(&qp->num_doorbells, 1);
  detail::owned_min(&qp->doorbell_wqes_min, t.wqes);
  detail::owned_max(&qp->doorbell_wqes_max, t.wqes);
  detail::owned_add(&qp->tx_bytes, t.payload_bytes);
  detail::owned_add(&qp->num_wqebb, t.wqebbs);
  if (t.writes != 0) detail::owned_add(&qp->num_write_wqe, t.writes);
  if (t.write_imms != 0) detail::owned_add(&qp->num_write_imm_wqe, t.write_imms);
}

// `wqes` rung WQEs whose payload falls in size bucket `bucket` (payload_size_bucket()); same
// thread and rules as on_rung().
DISSECT_HD inline uint32_t payload_size_bucket(uint64_t bytes) { return detail::size_bucket(bytes); }
DISSECT_HD inline void on_rung_sizes(QpCounters* qp, uint32_t bucket, uint64_t wqes) {
  if (qp == nullptr) return;
  detail::owned_add(&qp->wqe_size_histogram[bucket], wqes);
}

// A CQE for one of our send WQEs that was not in the latency sample.
DISSECT_HD inline void on_completion(QpCounters* qp) {
  if (qp == nullptr) return;
  add_relaxed<Scope::gpu>(&qp->num_wqe_rcvd, 1);
  add_relaxed<Scope::gpu>(&qp->num_wqe_completed, 1);
}

// `cqes` CQEs drained that retired `wqes` of our send WQEs (one CQE retires every unsignalled WQE
// before it): one add per counter, however many WQEs the range held.
template <Writers W = Writers::many>
DISSECT_HD inline void on_completions(QpCounters* qp, uint64_t wqes, uint64_t cqes) {
  if (qp == nullptr) return;
  detail::add<W>(&qp->num_wqe_rcvd, cqes);
  detail::add<W>(&qp->num_wqe_completed, wqes);
}

// The latency part of on_completion_sampled(), for a WQE already counted by on_completions().
template <Writers W = Writers::many>
DISSECT_HD inline void record_latency_sample(QpCounters* qp, uint64_t latency_ns) {
  if (qp == nullptr) return;
  detail::add<W>(&qp->wqe_completion_histogram[latency_bucket(*qp, latency_ns)], 1);
  detail::keep_min<W>(&qp->wqe_completion_ns_min, latency_ns);
  detail::keep_max<W>(&qp->wqe_completion_ns_max, latency_ns);
}

// A CQE for one of our send WQEs that was in the latency sample, `latency_ns` after its post.
// Only this hook writes the three latency fields, so no other counter moves with N.
DISSECT_HD inline void on_completion_sampled(QpCounters* qp, uint64_t latency_ns) {
  if (qp == nullptr) return;
  on_completion(qp);
  record_latency_sample(qp, latency_ns);
}

// A CQE for a send WQE whose post stamp is `post_stamp` (kNotSampled if on_post returned false).
// Reads the clock only for sampled WQEs.
DISSECT_HD inline void on_completion_stamped(QpCounters* qp, uint64_t post_stamp) {
  if (qp == nullptr) return;
  if (post_stamp == kNotSampled) {
    on_completion(qp);
    return;
  }
  uint64_t now = clock_ns();
  on_completion_sampled(qp, now > post_stamp ? now - post_stamp : 0);
}

// A receive CQE carrying `bytes` of payload.
DISSECT_HD inline void on_receive(QpCounters* qp, uint64_t bytes) {
  if (qp == nullptr) return;
  add_relaxed<Scope::gpu>(&qp->num_wqe_rcvd, 1);
  add_relaxed<Scope::gpu>(&qp->rx_bytes, bytes);
}

// A CQE that matched nothing we track (counted as drained, not as completed).
DISSECT_HD inline void on_unmatched_cqe(QpCounters* qp) {
  if (qp == nullptr) return;
  add_relaxed<Scope::gpu>(&qp->num_wqe_rcvd, 1);
}

// The CQ was polled once (whether or not it returned a CQE).
template <Writers W = Writers::many>
DISSECT_HD inline void on_cq_poll(QpCounters* qp) {
  if (qp == nullptr) return;
  detail::add<W>(&qp->cq_poll_count, 1);
}

// A drained CQE had an error status. It is counted as drained (num_wqe_rcvd) by the hook that
// accounts for what it retired (on_completions), never here too: an error CQE counts once.
template <Writers W = Writers::many>
DISSECT_HD inline void on_cq_error(QpCounters* qp) {
  if (qp == nullptr) return;
  detail::add<W>(&qp->num_cq_errors, 1);
}

// `requests` network requests finished on the channel (see ChannelCounters).
DISSECT_HD inline void on_requests_completed(ChannelCounters* channel, uint64_t requests = 1) {
  if (channel == nullptr) return;
  add_relaxed<Scope::gpu>(&channel->num_req_completed, requests);
}

// --- host-side helpers (not for the data path) ---

// Latency-histogram parameters a block is initialised with; Config::histogram() builds them.
struct HistogramShape {
  uint32_t buckets;        // 1..kMaxHistogramBuckets
  uint64_t interval_ns;    // 1..kMaxHistogramIntervalNs
  uint64_t sample_interval;  // N, a power of two
};
// Bounds the interval so that (buckets - 1) * interval^2 < 2^63: the multiply in latency_bucket()
// is then exact below the last bucket without a division fallback.
inline constexpr uint64_t kMaxHistogramIntervalNs = uint64_t{1} << 29;

// Sets the configuration line and zeroes every counter (extremes start at their sentinels).
void initialise_counters(QpCounters& qp, uint32_t qp_number, const HistogramShape& shape);

// A zeroed block with the same configuration as `slot`: what the GPU path copies to GPU memory.
QpCounters fresh_copy(const QpCounters& slot);

// Adds a block's counts into `slot` (extremes combined), e.g. a GPU block copied back at finalise.
// `from` must have the same histogram configuration; returns false (and changes nothing) if not.
bool merge_from(QpCounters& slot, const QpCounters& from);

// A consistent-enough copy of a live block: each field read with a relaxed atomic load.
QpCounters snapshot(const QpCounters& slot);
ChannelCounters snapshot(const ChannelCounters& channel);

}  // namespace dissect::telemetry
