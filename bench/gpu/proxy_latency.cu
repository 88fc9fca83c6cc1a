// `dissect gpu-proxy-latency`: the proxy rows of Table 3 with a GPU producer. One GPU thread, 8 B
// puts, at most one outstanding, through the baseline and the tuned handoff into rings in mapped
// host memory; one host worker (T = 1) serves R = 2 rings with B = 1 and posts through the softnic
// (host-thread engine); completions come back through a host-resident counter.
//
//   issue           the enqueue call (reserve, room check, descriptor store, publish); four
//                   producers (Mode below): baseline, tuned, tuned + payload fence, and tuned
//                   through the ring handle with a release store
//   put+completion  issue and the wait until the ring's completion counter passes the index
//   round trip      CTA 0 writes i into B's landing word through ring 0; CTA 1, polling it, writes
//                   it back into A's through ring 1; CTA 0 sees it
//   references      in the same run and timed the same way (the payload word stored first, then
//                   clock64 around one 16 B store to mapped host memory): a posted
//                   st.global.v2.u64, and st.release.sys.v2.u64 (the tuned handoff's store, so the
//                   fence's share of the tuned issue is visible). Issue #4: tuned issue <= 2x the
//                   posted store.
//
// Timing: clock64 per operation, converted with the effective SM clock measured against
// %globaltimer over the whole kernel (harness.cuh). Every number is labelled softnic: the worker
// and the engine are host threads, not a ConnectX.
#include "dissect/bench/proxy_cuda_rig.h"
#include "dissect/common/wait.h"
#include "dissect/proxy/handoff.h"
#include "harness.cuh"
#include "gpu_command.h"
#include "to_report.h"

namespace dissect::bench {
namespace gpu {
namespace {

constexpr uint32_t kLanding = 0;  // the word each side polls
constexpr uint32_t kSource = 1;   // the word each side sends from
constexpr uint32_t kRingEntries = 1024;

struct ProxySamples {
  unsigned long long* issue = nullptr;  // cycles per op
  unsigned long long* total = nullptr;
  Timer* timer = nullptr;
  uint32_t* status = nullptr;
};

// The two endpoints' words (kLanding, kSource) a proxy kernel sends between, in mapped memory.
struct ProxyWords {
  uint64_t* a;
  uint64_t* b;
};

__device__ inline proxy::Request write_word(uint32_t window, uint32_t from, uint32_t to) {
  return proxy::Request{proxy::Operation::write, window, 8, from * 8, uint64_t{to} * 8};
}

__device__ inline void finish(const ProxySamples& out, uint64_t g0, long long c0, uint32_t status) {
  out.timer->cycles = static_cast<unsigned long long>(clock64() - c0);
  out.timer->ns = now_ns() - g0;
  *out.status = status;
}

// How the GPU producer hands a request over.
//   baseline            device atomic on head, PCIe read of the worker's tail, release on ready[]
//   tuned_release       the ring's sole producer through its handle: head and tail cache in GPU
//                       memory, descriptor by st.release.sys.v2.u64 (orders the payload itself)
//   tuned               the paper's tuned enqueue: OwnedRing (head, tail cache in registers) and
//                       one posted 16 B store; the payload was ordered by order_payloads() before
//                       the timed span (a producer pays it once per batch)
//   tuned_fenced        the same with order_payloads() inside the timed span (a batch of one)
enum class Mode { baseline, tuned_release, tuned, tuned_fenced };

template <Mode M>
__device__ inline proxy::Status enqueue_timed(const proxy::RingHandle& ring, proxy::OwnedRing& owned,
                                              const proxy::Request& request, uint64_t* index,
                                              long long* ca, long long* cb) {
  if constexpr (M == Mode::tuned) proxy::order_payloads();
  *ca = clock64();
  proxy::Status s;
  if constexpr (M == Mode::baseline) {
    s = proxy::enqueue<proxy::baseline, proxy::Sharing::shared>(ring, request, index);
  } else if constexpr (M == Mode::tuned_release) {
    s = proxy::enqueue<proxy::tuned>(ring, request, index);
  } else {
    if constexpr (M == Mode::tuned_fenced) proxy::order_payloads();
    s = proxy::enqueue(owned, request, index);
  }
  *cb = clock64();
  return s;
}

// issue and put+completion; the landing word must hold the op's value after its completion.
template <Mode M>
__global__ void proxy_put_kernel(proxy::RingHandle ring, ProxyWords words, OpCount ops,
                                 ProxySamples out) {
  uint64_t* const a = words.a;
  const uint64_t* const b = words.b;
  const uint32_t warmup = ops.warmup, iterations = ops.iterations;
  const uint64_t g0 = now_ns();
  const long long c0 = clock64();
  proxy::OwnedRing owned = proxy::own(ring);
  uint32_t status = CAUSE_NONE;
  for (uint32_t i = 0; i < warmup + iterations && status == CAUSE_NONE; ++i) {
    store_relaxed<Scope::system>(&a[kSource], uint64_t{i} + 1);
    uint64_t index = 0;
    long long ca, cb;
    const proxy::Status s =
        enqueue_timed<M>(ring, owned, write_word(0, kSource, kSource), &index, &ca, &cb);
    if (s != proxy::Status::ok) status = CAUSE_POST_REFUSED;
    else if (proxy::wait_completion(ring, index) != proxy::Status::ok) status = CAUSE_COMPLETION_FAILED;
    const long long cc = clock64();
    if (status == CAUSE_NONE && load_acquire<Scope::system>(&b[kSource]) != uint64_t{i} + 1) status = CAUSE_PAYLOAD_MISMATCH;
    if (i >= warmup) {
      out.issue[i - warmup] = static_cast<unsigned long long>(cb - ca);
      out.total[i - warmup] = static_cast<unsigned long long>(cc - ca);
    }
  }
  if constexpr (M == Mode::tuned || M == Mode::tuned_fenced) proxy::disown(owned);
  finish(out, g0, c0, status);
}

// Until *word == value, within common/wait.h's one bound (its default, DEFAULT_WAIT_TIMEOUT_NS).
// The wait sits inside the timed round trip, so it checks the bound with over() and spins bare:
// expired()'s 32 ns sleep a check would add up to that much to every sample.
__device__ inline uint32_t await_word(const uint64_t* word, uint64_t value) {
  BoundedWait wait;
  while (load_acquire<Scope::system>(word) != value) {
    if (wait.over()) return CAUSE_REPLY_TIMEOUT;
  }
  return CAUSE_NONE;
}

// Sends `value` from `from`'s source word into the peer's landing word.
template <Mode M>
__device__ uint32_t send_word(const proxy::RingHandle& ring, proxy::OwnedRing& owned, uint32_t window,
                              uint64_t* from, uint64_t value, uint64_t* index) {
  store_relaxed<Scope::system>(&from[kSource], value);
  long long ca, cb;
  return enqueue_timed<M>(ring, owned, write_word(window, kSource, kLanding), index, &ca, &cb) ==
                 proxy::Status::ok
             ? CAUSE_NONE : CAUSE_POST_REFUSED;
}

// The rings of a round trip: ring 0 carries A -> B (`ping`), ring 1 B -> A (`pong`).
struct ProxyRings {
  proxy::RingHandle ping;
  proxy::RingHandle pong;
};

// Two CTAs of one thread: CTA 0 pings A -> B on ring 0 and times it, CTA 1 answers B -> A on ring 1.
template <Mode M>
__global__ void proxy_round_trip_kernel(ProxyRings rings, ProxyWords words, OpCount ops,
                                        ProxySamples out) {
  const proxy::RingHandle& ping = rings.ping;
  const proxy::RingHandle& pong = rings.pong;
  uint64_t* const a = words.a;
  uint64_t* const b = words.b;
  const uint32_t warmup = ops.warmup, iterations = ops.iterations;
  const bool pinger = blockIdx.x == 0;
  const proxy::RingHandle& ring = pinger ? ping : pong;
  proxy::OwnedRing owned = proxy::own(ring);
  const uint64_t g0 = now_ns();
  const long long c0 = clock64();
  uint32_t status = CAUSE_NONE;
  for (uint32_t i = 0; i < warmup + iterations && status == CAUSE_NONE; ++i) {
    const uint64_t value = uint64_t{i} + 1;
    uint64_t index = 0;
    const long long ca = clock64();
    if (pinger) {
      status = send_word<M>(ring, owned, 0, a, value, &index);
      if (status == CAUSE_NONE) status = await_word(&a[kLanding], value);
    } else {
      status = await_word(&b[kLanding], value);
      if (status == CAUSE_NONE) status = send_word<M>(ring, owned, 1, b, value, &index);
    }
    const long long cb = clock64();
    // Retire outside the timed span: one outstanding request per side.
    if (status == CAUSE_NONE && proxy::wait_completion(ring, index) != proxy::Status::ok) status = CAUSE_COMPLETION_FAILED;
    if (pinger && i >= warmup) out.total[i - warmup] = static_cast<unsigned long long>(cb - ca);
  }
  if constexpr (M == Mode::tuned || M == Mode::tuned_fenced) proxy::disown(owned);
  if (pinger) finish(out, g0, c0, status);
  else if (status != CAUSE_NONE) atomicMax(out.status, status);
}

enum class StoreKind { posted, release };

// The reference: one 16 B store to mapped host memory, after the same payload-word store as the
// put loop. Posted: a weak st.global.v2.u64, a PCIe write TLP the SM does not wait for. Release:
// the tuned handoff's store, whose fence waits for the earlier payload write to be ordered.
template <StoreKind K>
__global__ void store16_kernel(proxy::Descriptor* target, uint64_t* payload, OpCount ops,
                               ProxySamples out) {
  const uint32_t warmup = ops.warmup, iterations = ops.iterations;
  const uint64_t g0 = now_ns();
  const long long c0 = clock64();
  for (uint32_t i = 0; i < warmup + iterations; ++i) {
    store_relaxed<Scope::system>(payload, uint64_t{i} + 1);
    proxy::Descriptor* slot = &target[i & 3];
    const proxy::Descriptor d{uint64_t{i} | proxy::PHASE_BIT, uint64_t{i} | proxy::PHASE_BIT};
    const long long ca = clock64();
    if constexpr (K == StoreKind::posted) {
      asm volatile("st.global.v2.u64 [%0], {%1, %2};" ::"l"(slot), "l"(d.word0), "l"(d.word1) : "memory");
    } else {
      proxy::store_descriptor_release(slot, d);
    }
    const long long cb = clock64();
    if (i >= warmup) out.issue[i - warmup] = static_cast<unsigned long long>(cb - ca);
  }
  finish(out, g0, c0, CAUSE_NONE);
}

// Device sample buffers and a stream for one run.
struct Run {
  ProxySamples samples;
  cudaStream_t stream = nullptr;
  explicit Run(uint32_t n) {
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "proxy-latency stream");
    check_cuda(cudaMalloc(&samples.issue, size_t{n} * 8), "issue samples");
    check_cuda(cudaMalloc(&samples.total, size_t{n} * 8), "total samples");
    check_cuda(cudaMalloc(&samples.timer, sizeof(Timer)), "timer");
    check_cuda(cudaMalloc(&samples.status, 64), "status");
    check_cuda(cudaMemsetAsync(samples.status, 0, 64, stream), "reset status");
  }
  ~Run() {
    cudaFree(samples.issue);
    cudaFree(samples.total);
    cudaFree(samples.timer);
    cudaFree(samples.status);
    cudaStreamDestroy(stream);
  }
};

struct RunSamples {
  std::vector<unsigned long long> issue, total;
  Timer timer{};
  uint32_t status = 0;
};

// Waits (bounded: every device wait times out and traps by itself) and copies the samples back.
RunSamples collect(const Run& run, uint32_t n, const char* what) {
  wait_for_stream(run.stream, std::string("gpu-proxy-latency: ") + what, 60, [] { return std::string(); });
  RunSamples s;
  s.issue.resize(n);
  s.total.resize(n);
  check_cuda(cudaMemcpyAsync(s.issue.data(), run.samples.issue, size_t{n} * 8, cudaMemcpyDeviceToHost, run.stream), what);
  check_cuda(cudaMemcpyAsync(s.total.data(), run.samples.total, size_t{n} * 8, cudaMemcpyDeviceToHost, run.stream), what);
  check_cuda(cudaMemcpyAsync(&s.timer, run.samples.timer, sizeof(Timer), cudaMemcpyDeviceToHost, run.stream), what);
  check_cuda(cudaMemcpyAsync(&s.status, run.samples.status, 4, cudaMemcpyDeviceToHost, run.stream), what);
  check_cuda(cudaStreamSynchronize(run.stream), what);
  return s;
}

struct Accumulated {
  gpu::TimedMetric issue{"issue", {}, {}, {}}, total{"put+completion", {}, {}, {}}, trip{"round trip", {}, {}, {}};
  double clock_sum = 0;
  uint32_t clocks = 0;
  bool valid = true;
  std::string note;
  std::string placement;
};

// Adds one kernel's samples; a device status fails the row and names the run.
bool accept(const RunSamples& s, uint32_t run, const char* what, Accumulated* acc) {
  if (s.status != CAUSE_NONE) {
    acc->valid = false;
    acc->note += std::string(what) + " run " + std::to_string(run) + ": device status " +
                 std::to_string(s.status) + " (" + describe_kernel_status(s.status) + "); ";
    return false;
  }
  acc->clock_sum += clock_mhz(s.timer);
  ++acc->clocks;
  return true;
}

proxy::ProxyConfig latency_config(proxy::Handoff handoff) {
  proxy::ProxyConfig c;
  c.workers = 1;  // T
  c.rings = 2;    // R: ring 0 A -> B, ring 1 B -> A
  c.batch = 1;    // B
  c.ring_entries = kRingEntries;
  c.handoff = handoff;
  return c;
}

template <Mode M>
void measure_run(const PePairConfig& config, proxy::Handoff kind, uint32_t run, Accumulated* acc) {
  const uint32_t n = config.iterations;
  proxy::cuda::GpuProxyRig rig(latency_config(kind), 64 * 8, proxy::cuda::CounterPlacement::host, config.device);
  rig.proxy->start();
  acc->placement = rig.placement();
  auto* a = reinterpret_cast<uint64_t*>(rig.a.device);
  auto* b = reinterpret_cast<uint64_t*>(rig.b.device);
  {
    Run r(n);
    proxy_put_kernel<M><<<1, 1, 0, r.stream>>>(rig.proxy->ring(0), ProxyWords{a, b},
                                               OpCount{config.warmup, n}, r.samples);
    check_cuda(cudaGetLastError(), "launch proxy_put_kernel");
    const RunSamples s = collect(r, n, "proxy_put_kernel");
    if (accept(s, run, "put", acc)) {
      add_run(acc->issue, s.issue.data(), n, s.timer);
      add_run(acc->total, s.total.data(), n, s.timer);
    }
  }
  {
    Run r(n);
    proxy_round_trip_kernel<M><<<2, 1, 0, r.stream>>>(ProxyRings{rig.proxy->ring(0), rig.proxy->ring(1)},
                                                      ProxyWords{a, b}, OpCount{config.warmup, n},
                                                      r.samples);
    check_cuda(cudaGetLastError(), "launch proxy_round_trip_kernel");
    const RunSamples s = collect(r, n, "proxy_round_trip_kernel");
    if (accept(s, run, "round trip", acc)) add_run(acc->trip, s.total.data(), n, s.timer);
  }
  const proxy::ShutdownReport report = rig.proxy->stop(proxy::StopMode::drain);
  if (!report.drained) {
    acc->valid = false;
    acc->note += "run " + std::to_string(run) + ": proxy not drained: " + report.describe() + "; ";
  }
}

std::string shape_note(const Accumulated& acc) {
  return "softnic host-thread engine, GPU producer; T=1 R=2 B=1 ring_entries=" + std::to_string(kRingEntries) +
         "; completion counter: host (mapped); pinning: " + acc.placement;
}

template <Mode M>
gpu::Measurement measure_handoff(const PePairConfig& config, const char* variant,
                                    const char* ordering) {
  const proxy::Handoff kind = M == Mode::baseline ? proxy::Handoff::baseline : proxy::Handoff::tuned;
  gpu::Measurement r = base_result(config, "proxy-latency", variant, ordering, 8, false);
  Accumulated acc;
  for (uint32_t run = 0; run < config.runs; ++run) {
    measure_run<M>(config, kind, run, &acc);
    config.progress.run_done(run);
  }
  r.metrics = {acc.issue, acc.total, acc.trip};
  r.payload_validated = acc.valid && !acc.issue.p50_ns.empty();
  r.sm_clock_mhz = acc.clocks ? acc.clock_sum / acc.clocks : 0;
  r.note = acc.note + shape_note(acc);
  return r;
}

template <StoreKind K>
gpu::Measurement measure_store16(const PePairConfig& config, const char* variant, const char* ordering) {
  gpu::Measurement r = base_result(config, "proxy-latency", variant, ordering, 16, false);
  Accumulated acc;
  const uint32_t n = config.iterations;
  for (uint32_t run = 0; run < config.runs; ++run) {
    proxy::cuda::MappedBuffer target(4 * sizeof(proxy::Descriptor) + 64);
    Run k(n);
    auto* slots = reinterpret_cast<proxy::Descriptor*>(target.device);
    auto* payload = reinterpret_cast<uint64_t*>(target.device + 4 * sizeof(proxy::Descriptor));
    store16_kernel<K><<<1, 1, 0, k.stream>>>(slots, payload, OpCount{config.warmup, n}, k.samples);
    check_cuda(cudaGetLastError(), "launch store16_kernel");
    const RunSamples s = collect(k, n, "store16_kernel");
    config.progress.run_done(run);
    const auto* last = reinterpret_cast<const proxy::Descriptor*>(target.host) + ((config.warmup + n - 1) & 3);
    acc.valid = acc.valid && last->word0 == (uint64_t{config.warmup + n - 1} | proxy::PHASE_BIT);
    if (accept(s, run, variant, &acc)) add_run(acc.issue, s.issue.data(), n, s.timer);
  }
  r.metrics = {acc.issue};
  r.payload_validated = acc.valid && !acc.issue.p50_ns.empty();
  r.sm_clock_mhz = acc.clocks ? acc.clock_sum / acc.clocks : 0;
  r.note = acc.note + "reference: one 16 B store to mapped host memory after an 8 B payload store, no proxy";
  return r;
}

// Issue #4's criterion, stated on the tuned row: tuned issue / posted 16 B store (p50 of runs).
void note_ratio(gpu::Measurement* tuned, const gpu::Measurement& posted) {
  const double reference = posted.metrics.empty() ? 0 : summary_p50(posted.metrics[0]);
  const double issue = tuned->metrics.empty() ? 0 : summary_p50(tuned->metrics[0]);
  if (reference <= 0 || issue <= 0) return;
  char line[160];
  std::snprintf(line, sizeof line, "; tuned issue / posted 16 B store = %.2f (issue #4 asks <= 2: %s)",
                issue / reference, issue <= 2 * reference ? "met" : "NOT met");
  tuned->note += line;
}

}  // namespace
}  // namespace gpu

namespace {

std::vector<Result> run_gpu_proxy_latency(const PePairConfig& config) {
  using namespace gpu;
  config.progress.plan(6 * size_t{config.runs});  // two reference stores, four handoffs
  gpu::Measurement posted = measure_store16<StoreKind::posted>(
      config, "16B posted store (reference)", "st.global.v2.u64 (posted, unordered)");
  gpu::Measurement release = measure_store16<StoreKind::release>(
      config, "16B release store (reference)", "st.release.sys.v2.u64");
  gpu::Measurement baseline = measure_handoff<Mode::baseline>(
      config, "baseline", "fetch-add head, PCIe tail read, st.release.sys ready flag");
  gpu::Measurement tuned = measure_handoff<Mode::tuned>(
      config, "tuned", "OwnedRing: head, cached tail in registers; posted st.relaxed.sys.v2.u64 "
      "descriptor; payload ordered before the span (order_payloads)");
  gpu::Measurement fenced = measure_handoff<Mode::tuned_fenced>(
      config, "tuned + payload fence", "as tuned, with order_payloads() (fence.sc.sys) in the span");
  gpu::Measurement handle = measure_handoff<Mode::tuned_release>(
      config, "tuned, handle + release", "head, cached tail in GPU memory; st.release.sys.v2.u64");
  note_ratio(&tuned, posted);
  for (gpu::Measurement* r : {&posted, &release, &baseline, &tuned, &fenced, &handle}) {
    r->engine = "host-thread";
    r->placement = "host";
    r->pe_layout = "one-gpu";
  }
  return to_results({baseline, tuned, fenced, handle, posted, release}, config);
}

int run_gpu_proxy(const Arguments& a, Report& r) {
  return run_gpu_experiment(a, r, {&run_gpu_proxy_latency, false, nullptr, true, /*on_pe_pair=*/false});
}

const bool registered = register_experiment(
    {"gpu-proxy-latency", "one GPU thread through the proxy: baseline vs tuned handoff, 16 B store reference (Table 3)",
     run_gpu_proxy, true});

}  // namespace

}  // namespace dissect::bench
