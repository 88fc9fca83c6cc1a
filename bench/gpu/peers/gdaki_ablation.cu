// gpu-gdaki-ablation: Table 3's GDAKI/mini-gda gap, taken apart. One GPU thread, one 8 B inline
// put outstanding, the timed loop of gpu-latency (issue, put+completion), for a ladder that walks
// from mini-gda's path to DOCA GPUNetIO's doca_gpu_dev_verbs_p, adding one DOCA behaviour a row:
//
//   1 mini-gda       gda::put_value<gpu_fence> on an OwnedQp: WQE; fence.acq_rel.gpu; dbrec
//                    (volatile st); doorbell st.relaxed.sys.b64                (gpu-latency's row)
//   2 + mmio         the doorbell as st.mmio.relaxed.sys.global.b64
//                    (doca_gpu_dev_verbs_store_relaxed_mmio, called by doca_gpu_dev_verbs_ring_db)
//   3 + doca fences  mini-gda's fence replaced by DOCA's as it issues them for one put:
//                    fence.release.gpu, fence.acquire.gpu around the ready index
//                    (doca_gpu_dev_verbs_mark_wqes_ready, sharing GPU), then fence.release.gpu
//                    before the doorbell (doca_gpu_dev_verbs_ring_db)
//   4 + double ring  doorbell, dbrec (st.relaxed.sys.b32), doorbell, each ring behind its own
//                    fence.release.gpu (doca_gpu_dev_verbs_submit_db, doca_priv_..._update_dbr)
//   5 + bookkeeping  DOCA's per-put work on its QP counters in global memory, sharing mode GPU:
//                    atom.add.relaxed.gpu on sq_rsvd_index, the slot-availability check (once the
//                    ring has wrapped: cqe_ci load, fence.acquire.sys, atom.max cqe_ci;
//                    doca_gpu_dev_verbs_reserve_wq_slots / _wait_until_slot_available /
//                    _poll_cq_at), the ready-index spin and store (mark_wqes_ready), the QP lock
//                    (atom.cas + fence.acquire.gpu), atom.max.acquire on sq_wqe_pi and the
//                    release unlock (submit_db, doca_gpu_dev_verbs_lock/_unlock/_atomic_max); the
//                    wait then advances cqe_ci as DOCA's poll_one_cq_at does
//   6 DOCA itself    doca_gpu_dev_verbs_p<uint64_t> + gdaki::wait (gpu-latency --path gdaki)
//
// Rows 2-5 keep mini-gda's reservation (registers, for the owner's wait), WQE builder and wait;
// the DOCA instructions are written here from what the headers do (nothing of DOCA is copied), and
// each cites the header function it mirrors. Row 6 minus row 5 is what the ladder does not
// reproduce: the QP record read through __ldg, DOCA's WQE stores (two st.weak.cs.v2.b64 and three
// 4 B stores against mini-gda's 16 B segments), and, for put+completion, DOCA's CQ poll.
//
// Runs with --engine gpu-kernel --placement gpu --layout one-gpu only (DOCA's GPU-scope fences).
#include "dissect/peers/gdaki.cuh"

#include <cuda/atomic>

#include <cstdio>
#include <iterator>

#include "../harness.cuh"
#include "gdaki_put_kernel.cuh"
#include "../peer_latency.h"

namespace dissect::bench {
namespace gpu {
namespace {

namespace gdaki = peers::gdaki;
using Fence = gda::ordering::gpu_fence;  // mini-gda's policy for the GPU engine; its wait's loads

// ---- DOCA's instructions, written from its headers (doca_gpunetio_dev_verbs_common.cuh) --------
// The "memory" clobbers are the compiler's only (DOCA's asm has none); they add no instruction.

// doca_gpu_dev_verbs_store_relaxed_mmio (CUDA >= 12.2, DOCA_GPUNETIO_VERBS_HAS_STORE_RELAXED_MMIO).
__device__ __forceinline__ void store_mmio_relaxed_sys(uint64_t* p, uint64_t v) {
  asm volatile("st.mmio.relaxed.sys.global.b64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// doca_gpu_dev_verbs_fence_release / _fence_acquire: fence.{release,acquire}.<scope> where PTX has
// them (CUDA >= 12.8 on sm_90, DOCA_GPUNETIO_VERBS_HAS_FENCE_ACQUIRE_RELEASE_PTX). DOCA emulates
// them with a release store or acquire load of a dummy elsewhere; here libcu++'s fence stands in.
#if CUDA_VERSION >= 12080 && (!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900)
#define DISSECT_ABLATION_FENCE_PTX 1
#endif
__device__ __forceinline__ void doca_fence_release_gpu() {
#ifdef DISSECT_ABLATION_FENCE_PTX
  asm volatile("fence.release.gpu;" ::: "memory");
#else
  cuda::atomic_thread_fence(cuda::memory_order_release, cuda::thread_scope_device);
#endif
}
__device__ __forceinline__ void doca_fence_acquire_gpu() {
#ifdef DISSECT_ABLATION_FENCE_PTX
  asm volatile("fence.acquire.gpu;" ::: "memory");
#else
  cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device);
#endif
}
__device__ __forceinline__ void doca_fence_acquire_sys() {
#ifdef DISSECT_ABLATION_FENCE_PTX
  asm volatile("fence.acquire.sys;" ::: "memory");
#else
  cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_system);
#endif
}

// DOCA's counters of one QP, as struct doca_gpu_dev_verbs_qp / _cq keep them (in global memory,
// updated in place): what row 5 reserves, publishes and rings through.
struct DocaCounters {
  uint64_t rsvd_index;   // sq_rsvd_index: WQEs reserved
  uint64_t ready_index;  // sq_ready_index: WQEs built and marked ready
  uint64_t wqe_pi;       // sq_wqe_pi: the producer index rung
  uint64_t cqe_ci;       // cq_sq.cqe_ci: CQEs consumed (advanced by the wait)
  int lock;              // sq_lock
};
static_assert(std::is_trivially_copyable_v<DocaCounters>);

// Row 5 uses DOCA's index (one per WQE) as mini-gda's WQEBB index: an 8 B inline write is 3 DS.
static_assert(gda::inline_write_wqebbs(8) == 1, "an 8 B inline put must fit one WQEBB");

enum class Step : int { mmio = 2, doca_fences = 3, double_ring = 4, bookkeeping = 5 };

constexpr uint32_t SPIN_BOUND = 1u << 24;  // iterations; one thread never spins here at all
// Row 5's causes of the status word are harness.cuh's CAUSE_ABLATION_SPIN, _INDEX and _SLOT.

// The ring of rows 2-4, for the WQEs below `end`.
template <Step S>
__device__ __forceinline__ void ring(const nic::QpHandle& qp, uint64_t end) {
  uint32_t* dbrec = &qp.dbrec_send->raw;
  const uint32_t dbrec_value = mlx5::dbrec_value(end).raw;
  const uint64_t db_value = mlx5::doorbell_value(end, qp.qpn);
  if constexpr (S == Step::mmio) {
    // mini-gda's gpu_fence ring, the doorbell store swapped for DOCA's.
    fence_release<Scope::gpu>();
    gda::ordering::plain_store(dbrec, dbrec_value);
    store_mmio_relaxed_sys(qp.doorbell, db_value);
  } else if constexpr (S == Step::doca_fences) {
    doca_fence_release_gpu();  // mark_wqes_ready: orders the WQE before the ready index
    doca_fence_acquire_gpu();  // mark_wqes_ready: after its ready-index spin
    gda::ordering::plain_store(dbrec, dbrec_value);
    doca_fence_release_gpu();  // ring_db: before the MMIO store
    store_mmio_relaxed_sys(qp.doorbell, db_value);
  } else {
    doca_fence_release_gpu();  // mark_wqes_ready
    doca_fence_acquire_gpu();
    // submit_db: ring_db, update_dbr (atomic_ref<system>.store relaxed), ring_db.
    doca_fence_release_gpu();
    store_mmio_relaxed_sys(qp.doorbell, db_value);
    store_relaxed<Scope::system>(dbrec, dbrec_value);
    doca_fence_release_gpu();
    store_mmio_relaxed_sys(qp.doorbell, db_value);
  }
}

// Row 5: DOCA's per-put work around mini-gda's WQE and step 4's ring. `base` is mini-gda's
// reservation (registers); DOCA's own, from its atomic, must agree and is the one the WQE uses.
__device__ __forceinline__ uint32_t post_with_bookkeeping(const nic::QpHandle& qp, DocaCounters* c,
                                                          uint64_t base, uint64_t value,
                                                          uint64_t remote, uint32_t rkey) {
  using Ref = cuda::atomic_ref<uint64_t, cuda::thread_scope_device>;
  // doca_gpu_dev_verbs_reserve_wq_slots<GPU>: atomic_add relaxed on sq_rsvd_index.
  const uint64_t idx = Ref(c->rsvd_index).fetch_add(1, cuda::memory_order_relaxed);
  if (idx != base) return CAUSE_ABLATION_INDEX;
  // _wait_until_slot_available: once the ring has wrapped, poll_cq_at(idx - nwqes), which for a
  // CQE already consumed reads cqe_ci, returns, then fence.acquire.sys and atomic_max on cqe_ci.
  const uint64_t nwqes = qp.sq.wqebb_count;
  if (idx >= nwqes) {
    const uint64_t slot = idx - nwqes;
    if (!(slot < Ref(c->cqe_ci).load(cuda::memory_order_relaxed))) return CAUSE_ABLATION_SLOT;
    doca_fence_acquire_sys();
    Ref(c->cqe_ci).fetch_max(slot + 1, cuda::memory_order_relaxed);
  }
  gda::write_rdma_write_value_wqe(qp, idx, value, 8, remote, rkey, gda::Completion::signaled);
  // doca_gpu_dev_verbs_mark_wqes_ready<GPU>: fence, spin for our turn, fence, publish.
  doca_fence_release_gpu();
  for (uint32_t n = 0; Ref(c->ready_index).load(cuda::memory_order_relaxed) != idx; ++n) {
    if (n > SPIN_BOUND) return CAUSE_ABLATION_SPIN;
  }
  doca_fence_acquire_gpu();
  Ref(c->ready_index).store(idx + 1, cuda::memory_order_relaxed);
  // doca_gpu_dev_verbs_submit_db<GPU>: lock (atomicCAS loop, fence.acquire.gpu), atomic_max
  // acquire on sq_wqe_pi, the double ring when it moved, unlock (release store).
  for (uint32_t n = 0; atomicCAS(&c->lock, 0, 1) != 0; ++n) {
    if (n > SPIN_BOUND) return CAUSE_ABLATION_SPIN;
  }
  doca_fence_acquire_gpu();
  const uint64_t end = idx + 1;
  const uint64_t old = Ref(c->wqe_pi).fetch_max(end, cuda::memory_order_acquire);
  if (old < end) {
    uint32_t* dbrec = &qp.dbrec_send->raw;
    const uint64_t db_value = mlx5::doorbell_value(end, qp.qpn);
    doca_fence_release_gpu();
    store_mmio_relaxed_sys(qp.doorbell, db_value);
    store_relaxed<Scope::system>(dbrec, mlx5::dbrec_value(end).raw);
    doca_fence_release_gpu();
    store_mmio_relaxed_sys(qp.doorbell, db_value);
  }
  cuda::atomic_ref<int, cuda::thread_scope_device>(c->lock).store(0, cuda::memory_order_release);
  return CAUSE_NONE;
}

// Where a row's puts land: the peer's destination slots and their rkey (op i: slot i % SLOTS).
struct RemoteSlots {
  uint8_t* dst;
  uint32_t rkey;
};

// Rows 2-5: put_latency_kernel's loop (OwnedQp, inline value, mini-gda's wait) with the step's
// submission in place of put_value's ring.
template <Step S>
__global__ void ablation_kernel(nic::QpHandle qp, DocaCounters* counters, RemoteSlots to,
                                OpCount ops, SampleBuffers out) {
  uint8_t* const dst = to.dst;
  const uint32_t rkey = to.rkey;
  const uint32_t warmup = ops.warmup, iterations = ops.iterations;
  const uint64_t g0 = now_ns();
  const long long c0 = clock64();
  uint32_t status = 0;
  gda::OwnedQp owned = gda::own(qp);
  const uint32_t wqebbs = gda::inline_write_wqebbs(8);
  for (uint32_t i = 0; i < warmup + iterations && status == 0; ++i) {
    const uint64_t remote = reinterpret_cast<uint64_t>(dst + size_t{i % SLOTS} * SLOT);
    const uint64_t value = payload_value(i, 8);
    const long long ca = clock64();
    uint64_t base = 0;
    status = static_cast<uint32_t>(gda::reserve<Fence, gda::Sharing::exclusive>(owned, wqebbs, &base));
    if (status == 0) {
      if constexpr (S == Step::bookkeeping) {
        status = post_with_bookkeeping(owned.qp, counters, base, value, remote, rkey);
      } else {
        gda::note_post<Fence>(owned.qp, base,
                              gda::write_rdma_write_value_wqe(owned.qp, base, value, 8, remote,
                                                              rkey, gda::Completion::signaled));
        gda::note_doorbell<Fence>(owned.qp, base, base + wqebbs);
        ring<S>(owned.qp, base + wqebbs);
      }
    }
    const long long cb = clock64();
    if (status == 0) {
      status = static_cast<uint32_t>(gda::wait_completion<Fence>(owned, base + wqebbs));
      if constexpr (S == Step::bookkeeping) {
        // DOCA's poll_one_cq_at, on success: atomic_max on cqe_ci.
        cuda::atomic_ref<uint64_t, cuda::thread_scope_device>(counters->cqe_ci)
            .fetch_max(base + 1, cuda::memory_order_relaxed);
      }
    }
    const long long cc = clock64();
    record_op(out, i, warmup, ca, cb, cc);
  }
  finish_timing(out, c0, g0, kernel_status(status, status != 0 ? qp.state->error : 0));
}

std::string status_text(uint32_t status) {
  switch (status_cause(status)) {
    case CAUSE_ABLATION_SPIN: return "row 5: a spin passed its bound";
    case CAUSE_ABLATION_INDEX: return "row 5: DOCA's reservation disagrees with mini-gda's";
    case CAUSE_ABLATION_SLOT: return "row 5: slot-availability check found its CQE unconsumed";
    default: return describe_kernel_status(status);
  }
}

// One row: `launch(pair)` runs the row's kernel on PE 0's stream to its end; the rest is
// measure_put_latency's.
template <typename Launch>
void measure(const PePairConfig& config, gpu::Measurement& result, Launch&& launch) {
  gpu::TimedMetric issue{"issue", {}, {}, {}}, total{"put+completion", {}, {}, {}};
  const RunTally tally = run_on_fresh_pairs(config, [&](PePair& pair, uint32_t run, RunTally& t) {
    auto& a = pair.pe[0];
    auto& b = pair.pe[1];
    cudaSetDevice(a.device);
    launch(pair);  // launches and waits: a row's device records live only inside it
    HostSamples samples;
    if (!read_run(pair, run, t, config.iterations, status_text, &samples)) return;
    add_run(issue, samples.a.data(), config.iterations, samples.timer);
    add_run(total, samples.b.data(), config.iterations, samples.timer);
    t.valid = t.valid && validate_slots(b.dst, config.warmup + config.iterations, 8, a.stream);
  });
  finish_latency_result(tally, issue, total, result);
}

template <Step S>
void measure_step(const PePairConfig& config, gpu::Measurement& result) {
  measure(config, result, [&](PePair& pair) {
    auto& a = pair.pe[0];
    auto& b = pair.pe[1];
    // DOCA's counters of a fresh QP start at 0, as the softnic's do (a record beside the running
    // engine: peers::DeviceRecord allocates nothing).
    const peers::DeviceRecord counters(a.device, sizeof(DocaCounters), a.stream);
    ablation_kernel<S><<<1, 1, 0, a.stream>>>(a.qp->handle(),
                                              static_cast<DocaCounters*>(counters.get()),
                                              RemoteSlots{b.dst, b.dst_mr.rkey},
                                              OpCount{config.warmup, config.iterations}, pair.samples);
    check_cuda(cudaGetLastError(), "launch ablation_kernel");
    wait(a.stream, pair, "gdaki ablation kernel");  // before the record goes back to its pool
  });
}

void measure_doca(const PePairConfig& config, gpu::Measurement& result) {
  measure(config, result, [&](PePair& pair) {
    auto& a = pair.pe[0];
    auto& b = pair.pe[1];
    const gdaki::Qp qp(a.qp->handle(), nic::placement_from_string(config.placement), a.device,
                       a.stream);
    // Row 6: gpu-latency --path gdaki's inline kernel (gdaki_put_kernel.cuh).
    gdaki_put_latency_kernel<true><<<1, 1, 0, a.stream>>>(
        qp.device_qp(), PutPath{a.src, a.src_mr.lkey, b.dst, b.dst_mr.rkey, 8},
        OpCount{config.warmup, config.iterations}, pair.samples);
    check_cuda(cudaGetLastError(), "launch gdaki_put_latency_kernel");
    wait(a.stream, pair, "gdaki ablation DOCA kernel");
  });
}

std::string signed_ns(double ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%+.0f ns", ns);
  return text;
}

}  // namespace
}  // namespace gpu

std::vector<gpu::Measurement> run_gdaki_ablation(const PePairConfig& config) {
  struct Row {
    const char* variant;
    const char* ordering;
    const char* adds;
    void (*measure)(const PePairConfig&, gpu::Measurement&);
  };
  const Row rows[] = {
      {"1 mini-gda", "gpu-fence",
       "gda::put_value<gpu_fence>, OwnedQp: WQE; fence.acq_rel.gpu; dbrec st.volatile; doorbell "
       "st.relaxed.sys",
       [](const PePairConfig& c, gpu::Measurement& r) {
         gpu::measure_put_latency<gda::ordering::gpu_fence, gpu::Payload::inline_value>(c, 8, r);
       }},
      {"2 + mmio doorbell", "gpu-fence, mmio doorbell",
       "doorbell st.mmio.relaxed.sys (doca_gpu_dev_verbs_store_relaxed_mmio in _ring_db)",
       &gpu::measure_step<gpu::Step::mmio>},
      {"3 + doca fences", "doca fences, single ring",
       "fence.release.gpu + fence.acquire.gpu (_mark_wqes_ready), fence.release.gpu before the "
       "doorbell (_ring_db), in place of mini-gda's fence.acq_rel.gpu",
       &gpu::measure_step<gpu::Step::doca_fences>},
      {"4 + double ring", "doca fences, double ring",
       "ring, dbrec st.relaxed.sys, ring, each ring behind fence.release.gpu "
       "(doca_gpu_dev_verbs_submit_db, doca_priv_gpu_dev_verbs_update_dbr)",
       &gpu::measure_step<gpu::Step::double_ring>},
      {"5 + doca bookkeeping", "doca fences, double ring, counters",
       "counters in global memory: atom.add sq_rsvd_index (_reserve_wq_slots), slot check after "
       "wrap: cqe_ci load + fence.acquire.sys + atom.max (_wait_until_slot_available, _poll_cq_at), "
       "ready-index spin + store (_mark_wqes_ready), lock atom.cas + fence.acquire.gpu, atom.max "
       "acquire sq_wqe_pi, release unlock (_submit_db); wait advances cqe_ci",
       &gpu::measure_step<gpu::Step::bookkeeping>},
      {"6 DOCA", "doca-gpu-sm-db",
       "doca_gpu_dev_verbs_p<uint64_t> (sharing GPU, GPU_SM_DB) + gdaki::wait; over row 5: QP "
       "record via __ldg, DOCA's WQE stores, its CQ poll",
       &gpu::measure_doca},
  };
  config.progress.plan(std::size(rows) * config.runs);
  std::vector<gpu::Measurement> out;
  double previous_issue = 0, previous_total = 0;
  for (const Row& row : rows) {
    gpu::Measurement r = gpu::base_result(config, "gdaki-ablation", row.variant, row.ordering, 8, true);
    row.measure(config, r);
    r.library = peers::gdaki::LIBRARY;
    r.library_version = peers::gdaki::version();
    r.note += std::string("adds: ") + row.adds;
    if (r.metrics.size() == 2 && !r.metrics[0].p50_ns.empty() && !r.metrics[1].p50_ns.empty()) {
      const double issue = summary_p50(r.metrics[0]), total = summary_p50(r.metrics[1]);
      if (!out.empty()) {
        r.note += "; step over row " + std::to_string(out.size()) + ": issue " +
                  gpu::signed_ns(issue - previous_issue) + ", put+completion " +
                  gpu::signed_ns(total - previous_total);
      }
      previous_issue = issue;
      previous_total = total;
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace dissect::bench
