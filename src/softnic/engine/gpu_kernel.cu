#include "gpu_kernel.h"

#include <cstdio>

#include "serve.h"

namespace dissect::softnic {

#if defined(DISSECT_ENGINE_PHASES)

void print_engine_phases(cudaStream_t stream) {
  unsigned long long cycles[ENGINE_PHASES] = {};
  cudaMemcpyFromSymbolAsync(cycles, engine_phase_cycles, sizeof cycles, 0, cudaMemcpyDeviceToHost,
                            stream);
  cudaStreamSynchronize(stream);
  std::fprintf(stderr, "dissect: engine phase cycles (all warps):");
  for (int i = 0; i < ENGINE_PHASES; ++i) std::fprintf(stderr, " %d:%llu", i, cycles[i]);
  std::fprintf(stderr, "\n");
}
#else
void print_engine_phases(cudaStream_t) {}
#endif

namespace {

constexpr uint32_t STOP_CHECK_PASSES = 16;     // the stop flag is in GPU memory: an L2 read
constexpr uint64_t HEARTBEAT_PASSES = 1024;
constexpr uint32_t STATUS_EVERY_WINDOWS = 256;  // a warp's "current QP" note to host memory
constexpr uint32_t QP_COUNT_PASSES = 64;        // new QPs are seen within this many passes
// An idle warp sleeps between passes, up to this long, so that spinning warps do not crowd the L2
// slices their busy neighbours need; a pass with work resets it. A doorbell waits half an idle
// pass on average before the warp sees it, so the sleep is kept short beside an idle pass's one
// L2 round trip (~0.6 us, phase counters on the H200): 64 warps polling at that pace read ~10^8
// words/s, a small fraction of what the L2 serves.
constexpr uint32_t MAX_IDLE_SLEEP_NS = 64;

template <typename T>
__device__ inline void status_store(T* p, T v) {
  *reinterpret_cast<volatile T*>(p) = v;
}

// What warp 0 publishes to the host status block once per heartbeat: writes to mapped host memory
// cross PCIe, so the hot loop makes none of them.
__device__ void heartbeat(const EngineLaunch& p, uint64_t passes) {
  status_store(&p.status->wqes_executed,
               static_cast<uint64_t>(*reinterpret_cast<volatile unsigned long long*>(&p.counts[0])));
  status_store(&p.status->heartbeat, passes / HEARTBEAT_PASSES);
}

__device__ void note_visit(const EngineLaunch& p, const QpContext& qp, const Served& s,
                           uint32_t* windows) {
  atomicAdd(&p.counts[0], static_cast<unsigned long long>(s.executed));
  if (s.syndrome != 0) {
    status_store(&p.status->last_error_qpn, qp.qpn);
    status_store(&p.status->last_syndrome, static_cast<uint32_t>(s.syndrome));
  }
  if (++*windows % STATUS_EVERY_WINDOWS == 1 || s.syndrome != 0) {
    status_store(&p.status->current_qpn, qp.qpn);
    status_store(&p.status->consumer, qp.sq_consumer);
  }
}

// The doorbell watch: lane j of a warp watches the doorbell word of the warp's QP slot j (QP
// warp + j * W), so that one pass checks the warp's first 32 QPs with one load each, all in flight
// at once, and visits (serve_qp) only those whose word changed. Before, a pass visited every QP,
// the leader reading each one's state, connection and doorbell one QP after the other, and a
// doorbell waited on average half of such a pass before a head saw it ("Where doorbell -> CQE
// goes", docs/softnic-engine.md). A warp's slots past 32 are swept (sweep_doorbells).
//
// The watch is only a hint of when to visit: the visit reads the doorbell again with acquire
// semantics (open_window), and everything it executes is announced by what that read saw. What
// the watch must never do is keep a QP with work from its visit. A QP has work without a new
// doorbell value only when a visit left some (its budget, or scopes a refreshed copy changed:
// Served::pending, `more`) or before the watch began (a watch starts with one visit whatever the
// word says). A new value that arrives is seen by a later pass's load; `rung` is set to the value
// a lane loaded before the visit, and the visit's acquire load reads that value or a newer one:
// the lane's relaxed load, the warp barrier that opens the visit's head (lanes.leader in
// open_window) and the leader's acquire are ordered in causality order, so coherence forbids the
// leader an older value. An equal value after a change cannot happen: the doorbell carries the
// producer's 16-bit WQE counter, and no more than the ring (at most 2^15 WQEBBs) can be posted
// before the engine consumes; open_window ignores an equal value the same way (apply_doorbell).
//
// Memory: a lane starts watching a QP only once it has acquired a state other than RESET, which
// the control path publishes after the whole context (its doorbell pointer and flags) was written;
// a destroyed QP's doorbell is freed only with this engine stopped around it (SoftQueuePair's
// destructor), so a word watched in this launch stays mapped for the launch, and a new launch
// starts every watch anew (RESET QPs are then never watched).
constexpr uint32_t WATCHED_SLOTS = 32;

struct DoorbellWatch {
  uintptr_t bell = 0;  // the watched word, bit 0 set: read with system scope; 0 = not watched yet
  uint64_t rung = 0;   // the value handed to the last visit
  bool more = false;   // visit next pass whatever the word says
};

// The slots (bit j: slot j) of this pass's visits among the warp's first `mine` QPs.
template <typename Lanes>
__device__ uint32_t watch_doorbells(const Lanes& lanes, DoorbellWatch& d, const EngineLaunch& p,
                                    uint32_t warp, uint32_t mine) {
  const uint32_t slot = lanes.lane();
  bool visit = false;
  if (slot < mine && d.bell == 0) {
    visit = true;  // as before the watch: the visit reads what there is
    QpContext& qp = p.tables->qps[warp + slot * p.warps];
    if (load_acquire<TABLE_SCOPE>(&qp.state) != QP_STATE_RESET) {
      const bool system = (qp.engine_flags & ENGINE_QUEUES_IN_HOST_MEMORY) != 0;
      // `rung` stays 0, which no doorbell is (it carries the QPN): the next pass visits again
      // once the QP was ever rung, and from then on only on news.
      d.bell = reinterpret_cast<uintptr_t>(qp.doorbell) | (system ? 1 : 0);
    }
  } else if (slot < mine) {
    // Relaxed, not acquire: an acquire empties L1 (CCTL.IVALL) in each lane; the visit acquires.
    uint64_t* word = reinterpret_cast<uint64_t*>(d.bell & ~uintptr_t{1});
    const uint64_t value =
        (d.bell & 1) != 0 ? load_relaxed<Scope::system>(word) : load_relaxed<Scope::gpu>(word);
    visit = value != d.rung || d.more;
    d.rung = value;
  }
  return __ballot_sync(WarpLanes::FULL, visit);
}

// The warp's slots past the watched ones, 64 a sweep from slot `base`: lane j reads the records of
// slots base + j and base + 32 + j and their doorbell words, every lane's loads in flight at once,
// and the slots with news (has_news) are visited (bit k: slot base + k). Before the sweep each of
// them got a visit every pass, its leader copying the context anew (only CACHED_QPS stay copied)
// and reading the doorbell one QP after the other: at 4,096 QPs a direction a warp's 32 idle
// responders set the length of the pass that served its two active requesters (docs/softnic-
// engine.md, long reuse). The record is written by this warp's leader alone, before the warp
// barrier that ends its visit, so each lane reads the newest; the doorbell word is read relaxed,
// and the visit reads it again with acquire (as the watch's, the sweep only chooses when to visit,
// and a QP with work is never passed over).
//
// A sweep is dependent round trips, so a pass pays them per sweep, not per slot: two slots a lane,
// and the state's acquire only until the lane has seen the slot out of RESET in this launch
// (`live`, bit k: the lane's k-th swept slot, WATCHED_SLOTS + 32 k + lane). The acquire is needed
// once: the control path publishes the state after the doorbell pointer and flags, which do not
// change while the QP lives, and a QP is destroyed only with its engine stopped (the watch's rule),
// so a later pass may read them relaxed; a QP that went back to RESET meanwhile is one its visit
// finds in RESET (open_window acquires the state). Three round trips a sweep of 32 become two a
// sweep of 64 (the record with the pointer, then the word); slots past the mask's 32 bits (a warp
// with more than 1,056 QPs) keep the acquire.
template <typename Lanes>
__device__ uint64_t sweep_doorbells(const Lanes& lanes, const EngineLaunch& p, uint32_t warp,
                                    uint32_t base, uint32_t mine, uint32_t& live) {
  constexpr uint32_t HALVES = 2;
  const uint32_t first_bit = (base - WATCHED_SLOTS) / WATCHED_SLOTS;  // base = WATCHED_SLOTS + 64 i: bit 2 i
  const QpContext* qp[HALVES];
  bool known[HALVES];
  DISSECT_UNROLL
  for (uint32_t h = 0; h < HALVES; ++h) {
    const uint32_t slot = base + h * WATCHED_SLOTS + lanes.lane();
    const uint32_t bit = first_bit + h;
    qp[h] = slot < mine ? &p.tables->qps[warp + slot * p.warps] : nullptr;
    known[h] = qp[h] != nullptr && bit < 32 && ((live >> bit) & 1) != 0;
    if (qp[h] != nullptr && !known[h] && load_acquire<TABLE_SCOPE>(&qp[h]->state) != QP_STATE_RESET) {
      known[h] = true;
      if (bit < 32) live |= 1u << bit;
    }
  }
  uint64_t* word[HALVES];
  bool system[HALVES];
  DISSECT_UNROLL
  for (uint32_t h = 0; h < HALVES; ++h) {
    word[h] = known[h] ? qp[h]->doorbell : nullptr;
    system[h] = known[h] && (qp[h]->engine_flags & ENGINE_QUEUES_IN_HOST_MEMORY) != 0;
  }
  bool visit[HALVES];
  DISSECT_UNROLL
  for (uint32_t h = 0; h < HALVES; ++h) {
    visit[h] = false;
    if (word[h] != nullptr) {
      const uint64_t value = system[h] ? load_relaxed<Scope::system>(word[h]) : load_relaxed<Scope::gpu>(word[h]);
      visit[h] = has_news(*qp[h], value);
    }
  }
  const uint32_t low = __ballot_sync(WarpLanes::FULL, visit[0]);
  const uint32_t high = __ballot_sync(WarpLanes::FULL, visit[1]);
  return low | (uint64_t{high} << 32);
}

// Built once per pacing (Pacing, lanes.h): the `fast` kernel holds no timing-profile code (no
// pacing, no held WQE, the express window always open to it), and the profiled one none of the
// express window's. Each kernel's code is then one compact stretch that changes to the other
// case's code cannot move: the engine warp is bound by instruction fetch, and with both in one
// kernel a change to the paced path alone moved the fast path's put+completion by up to 0.3 us
// (H100, 2026-12-06). The runner launches the one its NIC's profile names (launch_engine_kernel).
template <Pacing P>
__global__ void engine_kernel(EngineLaunch p) {
  extern __shared__ Window windows[];
  const WarpLanesOf<P> lanes;
  const uint32_t warp_in_cta = threadIdx.x / 32;
  const uint32_t warp = blockIdx.x * (blockDim.x / 32) + warp_in_cta;
  Window& w = windows[warp_in_cta];
  const bool leader = warp == 0 && lanes.lane() == 0;
  if (lanes.lane() < CACHED_QPS) w.cache[lanes.lane()].qp = nullptr;  // shared memory starts undefined
  if (lanes.lane() == 0) {
    w.scratch.qp = nullptr;
    w.clock.pass_ns = 0;  // no date kept (doorbell_dates 0): apply_doorbell stores none
    use_profile(w, p.tables->profile);
    // The kernel of the other pacing would ignore the profile or pace without one: a launch
    // error, never a silent fallback (launch_engine_kernel chooses from the same profile).
    if ((w.profile.enabled != 0) != (P == Pacing::always)) __trap();
    w.pipe = &p.tables->pipe_busy_until;
    w.nic = p.tables;
    w.qp_cache = p.tables->qp_cache;
    w.in_flight.stage = IN_FLIGHT_NONE;
    w.holds = 1;  // this loop releases held lone WQEs (release_due_in_flight)
    w.held = nullptr;  // its windows are never held (lanes.h, HOLDS_WINDOWS)
  }
  __syncwarp();
  if (leader) {
    status_store(&p.status->generation, p.generation);
    status_store(&p.status->phase, uint32_t{ENGINE_RUNNING});
  }
  // A shared lane's visit budget, fixed for the engine's life: the fast kernel's is a constant.
  const uint32_t shared_budget = P == Pacing::always ? visit_budget(w.profile, false) : SERVICE_BUDGET;
  uint64_t passes = 0;
  uint32_t visits_with_work = 0;
  uint32_t count = 0;
  uint32_t sleep_ns = 0;
  DoorbellWatch watch;
  uint32_t swept_live = 0;  // sweep_doorbells: this lane's swept slots seen out of RESET
  for (;;) {
    if (passes % QP_COUNT_PASSES == 0) {
      count = lanes.broadcast(load_acquire<Scope::gpu>(&p.tables->qp_count));
    }
    const uint32_t mine = warp < count ? (count - warp + p.warps - 1) / p.warps : 0;  // QPs of this warp
    // The pass's clock, read before any of its doorbell reads (the barrier orders lane 0's read
    // before every lane's watch load): the ring dates of the doorbells this pass sees (ring_date).
    // Only when doorbells are dated: without it pass_ns stays 0 and apply_doorbell stores no date.
    if (p.doorbell_dates != 0) {
      if (lanes.lane() == 0) w.clock.pass_ns = now_ns();
      __syncwarp();
    }
    DISSECT_PHASE_START;
#if defined(__CUDA_ARCH__) && defined(DISSECT_ENGINE_PHASES)
    const long long pass_start_ = phase_mark_;
#endif
    const uint32_t due = watch_doorbells(lanes, watch, p, warp, mine);
    if (due != 0) DISSECT_PHASE(16);
    release_due_in_flight(lanes, w);
    if (due != 0) DISSECT_PHASE(30);
    uint32_t executed = 0;
    // The watched slots (`due`), then the rest a sweep of 64 at a time: one call site of the visit,
    // whose inlined copy is most of the kernel's code (two made the fast kernel spill).
    for (uint32_t base = 0; base < mine; base += base == 0 ? WATCHED_SLOTS : 2 * WATCHED_SLOTS) {
      uint64_t news = base == 0 ? due : sweep_doorbells(lanes, p, warp, base, mine, swept_live);
      for (; news != 0; news &= news - 1) {
        const uint32_t slot = base + static_cast<uint32_t>(__ffsll(static_cast<long long>(news)) - 1);
        QpContext& qp = p.tables->qps[warp + slot * p.warps];
        DISSECT_PHASE_START;
        const Served s = serve_qp(lanes, w, qp, *p.tables, slot < CACHED_QPS ? &w.cache[slot] : nullptr,
                                  count <= p.warps ? SOLE_QP_BUDGET : shared_budget);
        DISSECT_PHASE(8);
#if defined(__CUDA_ARCH__) && defined(DISSECT_ENGINE_PHASES)
        if (s.executed != 0 && lanes.lane() == 0 && w.in_flight.stage != IN_FLIGHT_NONE && w.in_flight.held_ns != 0) {
          atomicAdd(&engine_phase_cycles[32], static_cast<unsigned long long>(now_ns() - w.in_flight.held_ns));  // ns
        }
#endif
        if (lanes.lane() == slot) watch.more = s.pending != 0;
        if (s.executed != 0 && lanes.lane() == 0) note_visit(p, qp, s, &visits_with_work);
        if (s.executed != 0) DISSECT_PHASE(9);
        executed += s.executed;
      }
    }
    if (executed != 0) DISSECT_PHASE(31);
    ++passes;
#if defined(DISSECT_ENGINE_PHASES)
    if (executed != 0 && lanes.lane() == 0) atomicAdd(&engine_phase_cycles[10], 1ull);  // busy passes
    if (lanes.lane() == 0) atomicAdd(&engine_phase_cycles[11], static_cast<unsigned long long>(executed));
#endif
#if defined(__CUDA_ARCH__) && defined(DISSECT_ENGINE_PHASES)
    if (lanes.lane() == 0) {  // the pass, before its sleep: busy (22) or idle (23, 24 counts them)
      const unsigned long long pass_cycles_ = static_cast<unsigned long long>(clock64() - pass_start_);
      atomicAdd(&engine_phase_cycles[executed != 0 ? 22 : 23], pass_cycles_);
      if (executed == 0) atomicAdd(&engine_phase_cycles[24], 1ull);
    }
#endif
    if (p.until_idle && executed == 0) break;
    if (passes % STOP_CHECK_PASSES == 0 &&
        lanes.broadcast(*reinterpret_cast<const volatile uint32_t*>(p.stop)) != 0) {
      break;
    }
    if (leader && passes % HEARTBEAT_PASSES == 0) heartbeat(p, passes);
    if (executed != 0 || w.in_flight.stage != IN_FLIGHT_NONE) {
      sleep_ns = 0;  // a held WQE's date may come within a pass: no sleep (in_flight.h)
    } else {
      sleep_ns = sleep_ns == 0 ? 32 : (sleep_ns < MAX_IDLE_SLEEP_NS ? 2 * sleep_ns : sleep_ns);
      __nanosleep(warp < count ? sleep_ns : 4 * MAX_IDLE_SLEEP_NS);  // no QP of its own yet
    }
  }
  settle_in_flight(lanes, w);  // stopping: a held WQE's payload and CQE still come, at their dates
  if (lanes.lane() == 0 && atomicAdd(&p.counts[1], 1ull) + 1 == p.warps) {
    // The last warp out: every WQE count is in.
    heartbeat(p, passes);
    __threadfence_system();
    status_store(&p.status->phase, uint32_t{ENGINE_EXITED});
  }
}

// A dynamically indexed local array and a printf: the two per-context resources measured on the
// H200 to make a kernel wait forever behind a running engine when first needed.
__global__ void resource_probe_kernel(uint32_t index, uint32_t* out) {
  volatile uint32_t scratch[256];
  for (uint32_t i = 0; i < 256; ++i) scratch[i] = i * index;
  const uint32_t v = scratch[index & 255];
  if (v == 0xfffffffeu) printf("dissect: softnic resource probe %u\n", v);
  if (out != nullptr) *out = v;
}

}  // namespace

cudaError_t launch_engine_kernel(const EngineLaunch& launch, uint32_t ctas, uint32_t warps_per_cta,
                                 bool paced, cudaStream_t stream) {
  const size_t shared = size_t{warps_per_cta} * sizeof(Window);
  const auto kernel = paced ? engine_kernel<Pacing::always> : engine_kernel<Pacing::never>;
  if (shared > 48 * 1024) {  // above the default dynamic limit: opt in (Hopper allows 227 KiB)
    const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               static_cast<int>(shared));
    if (e != cudaSuccess) return e;
  }
  kernel<<<ctas, warps_per_cta * 32, shared, stream>>>(launch);
  return cudaGetLastError();
}

cudaError_t launch_resource_probe(uint32_t index, cudaStream_t stream) {
  resource_probe_kernel<<<1, 32, 0, stream>>>(index, nullptr);
  return cudaGetLastError();
}

const void* engine_kernel_function(bool paced) {
  return paced ? reinterpret_cast<const void*>(&engine_kernel<Pacing::always>)
               : reinterpret_cast<const void*>(&engine_kernel<Pacing::never>);
}

}  // namespace dissect::softnic
