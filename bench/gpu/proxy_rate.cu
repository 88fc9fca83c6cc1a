// `dissect gpu-proxy-rate`: Figure 7 with GPU producers. 8 B proxy message rate against worker
// count T at batch B, over R rings (default 32, the paper's T = 1, R = 32 configuration), one
// GPU producer thread per ring (the tuned handoff's sole producer, OwnedRing) enqueueing writes
// back to back with the ring's backpressure as the only flow control; T host workers, pinned on
// the GPU's NUMA node when sysfs names it, chain up to B descriptors per post into the softnic
// host engine (one engine thread per worker QP). The rate is every producer's messages over the
// span from the first producer's start to the last one's last completion, on %globaltimer.
//
// Every write moves its own 8 B word (message i of all carries i + 1, written by the host before
// the launch) to its own destination word; afterwards every destination word is checked. Each
// row carries the host engine's own ceiling (host-nic-ceiling), the workers' chains and busy
// passes, each worker's core and clock state (Appendix C.1), and what bounded the point.
//
// The grid: --workers x --batches, plus the batch sweep at T = 1 (--batch-sweep), plus the grid's
// T = 1 points with each worker's send queue holding its share of the run (`…, queue holding the
// run`): no worker waits for the host engine there, so their `posting rate` (each worker's clock
// read at its first post and every 64th) is the workers' own pace, which the chaining gain is read
// from where the engine cannot keep up (--deep-queue: every point so). --producers host is not
// offered here: `dissect proxy-rate` is the host-producer experiment.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "dissect/bench/experiment.h"
#include "dissect/bench/flag_help.h"
#include "dissect/bench/machine.h"
#include "dissect/bench/progress.h"
#include "dissect/bench/proxy_cuda_rig.h"
#include "dissect/bench/proxy_experiments.h"
#include "dissect/common/error.h"
#include "dissect/proxy/handoff.h"
#include "dissect/proxy/placement.h"
#include "dissect/softnic/gpu_engine.h"
#include "../cpu/host_ceiling.h"
#include "gpu_command.h"
#include "harness.cuh"
#include "proxy_bound.h"
#include "rate_bound.h"

namespace dissect::bench {
namespace {

struct RateConfig {
  std::vector<uint64_t> workers, batches, batch_sweep;
  bool deep = false;  // --deep-queue: every point's worker send queues hold its run
  uint32_t rings = 32;
  uint32_t ring_entries = 1024;
  uint64_t messages = 1u << 21;  // per point, all producers
  uint32_t runs = 3;
  proxy::cuda::CounterPlacement counters = proxy::cuda::CounterPlacement::host;
  std::vector<int> cores;        // empty: the GPU's NUMA node, dealt out round robin
  int device = 0;
  std::string nic_profile = "fast";
};

struct Point {
  uint32_t workers, batch;
  // Each worker's send queue holds its share of the run, so no worker waits for room and its
  // posting rate is its own pace whatever the host engine carries.
  bool holds_run = false;
};

struct PointRun {
  double mmsgs = 0;
  double posting_mmsgs = 0;    // the workers' own paces (WorkerStats::stamped_*), summed
  uint64_t deepest_backlog = 0;  // the host engine's, on the fullest worker QP (WQEBBs)
  gpu::WorkerPasses passes;
  bool valid = false;
  std::string failure, placement;
  std::vector<proxy::CpuClockState> clocks;
};

struct ProducerTimes {
  unsigned long long start, end;
  uint32_t status;  // 0 ok, 1 enqueue, 2 completion
};

// Producer r (one thread, CTA r) owns ring r and writes words [r * per_ring, (r + 1) * per_ring).
__global__ void proxy_rate_kernel(const proxy::RingHandle* rings, uint64_t per_ring, ProducerTimes* times) {
  const uint32_t r = blockIdx.x;
  const proxy::RingHandle ring = rings[r];
  proxy::OwnedRing owned = proxy::own(ring);
  ProducerTimes t{now_ns(), 0, 0};
  uint64_t index = 0;
  for (uint64_t m = 0; m < per_ring && t.status == 0; ++m) {
    const uint64_t offset = (r * per_ring + m) * 8;
    // The source words were written by the host before the launch: already visible to the worker.
    const proxy::Request request{proxy::Operation::write, 0, 8, static_cast<uint32_t>(offset), offset};
    if (proxy::enqueue(owned, request, &index) != proxy::Status::ok) t.status = 1;
  }
  proxy::disown(owned);
  if (t.status == 0 && proxy::wait_completion(ring, index) != proxy::Status::ok) t.status = 2;
  t.end = now_ns();
  times[r] = t;
}

template <typename T>
struct DeviceArray {
  T* data = nullptr;
  explicit DeviceArray(size_t n) { check_cuda(cudaMalloc(&data, sizeof(T) * n), "gpu-proxy-rate: device memory"); }
  ~DeviceArray() { cudaFree(data); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
};

// Launches the producers and waits for them; the rig's state names a stall.
std::vector<ProducerTimes> produce(proxy::cuda::GpuProxyRig& rig, uint32_t rings, uint64_t per_ring) {
  const std::vector<proxy::RingHandle> handles = rig.producer_rings();
  DeviceArray<proxy::RingHandle> device_rings(rings);
  DeviceArray<ProducerTimes> times(rings);
  check_cuda(cudaMemcpy(device_rings.data, handles.data(), sizeof(proxy::RingHandle) * rings, cudaMemcpyHostToDevice),
             "gpu-proxy-rate: ring handles");
  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "gpu-proxy-rate: stream");
  std::vector<ProducerTimes> out(rings);
  try {
    rig.proxy->start();
    proxy_rate_kernel<<<rings, 1, 0, stream>>>(device_rings.data, per_ring, times.data);
    check_cuda(cudaGetLastError(), "launch proxy_rate_kernel");
    gpu::wait_for_stream(stream, "gpu-proxy-rate producers", 120, [&] { return "\n" + rig.state(); });
    check_cuda(cudaMemcpy(out.data(), times.data, sizeof(ProducerTimes) * rings, cudaMemcpyDeviceToHost),
               "gpu-proxy-rate: producer times");
  } catch (...) {
    cudaStreamDestroy(stream);
    throw;
  }
  cudaStreamDestroy(stream);
  return out;
}

// Rings a worker serves at most (ring r goes to worker r % T).
uint64_t rings_per_worker(const RateConfig& c, const Point& p) { return (c.rings + p.workers - 1) / p.workers; }

// Messages per ring: the run's share, cut where the worker queues hold the run to what they hold.
uint64_t messages_per_ring(const RateConfig& c, const Point& p) {
  const uint64_t share = std::max<uint64_t>(1, c.messages / c.rings);
  return p.holds_run ? std::min<uint64_t>(share, gpu::MAX_SQ_WQEBBS / rings_per_worker(c, p)) : share;
}

// The run's largest worker share, WQEBBs (an 8 B write is one).
uint64_t worker_run_wqebbs(const RateConfig& c, const Point& p) { return rings_per_worker(c, p) * messages_per_ring(c, p); }

// WQEBBs of each worker QP's send queue: the rig's default, or deep enough for its share of the run.
uint32_t worker_sq_wqebbs(const RateConfig& c, const Point& p) {
  uint32_t depth = proxy::cuda::WORKER_SQ_WQEBBS;
  while (p.holds_run && depth < worker_run_wqebbs(c, p)) depth *= 2;
  return depth;
}

PointRun run_point(const RateConfig& c, const Point& p) {
  const uint64_t per_ring = messages_per_ring(c, p);
  const uint64_t total = per_ring * c.rings;
  proxy::ProxyConfig config = proxy::cuda::tuned_gpu_proxy(p.workers, c.rings, p.batch, c.ring_entries);
  config.cores = c.cores;
  proxy::cuda::GpuProxyRig rig(config, total * 8, c.counters, c.device,
                               proxy::cuda::engine_per_worker(p.workers, c.nic_profile), worker_sq_wqebbs(c, p));
  auto* source = reinterpret_cast<uint64_t*>(rig.a.host);
  const auto* destination = reinterpret_cast<const uint64_t*>(rig.b.host);
  for (uint64_t i = 0; i < total; ++i) source[i] = i + 1;
  const std::vector<ProducerTimes> t = produce(rig, c.rings, per_ring);

  PointRun run;
  run.placement = rig.placement();
  const proxy::ShutdownReport report = rig.proxy->stop(proxy::StopMode::drain);
  uint64_t descriptors = 0, posts = 0, passes = 0, busy = 0, full = 0;
  for (const proxy::WorkerStats& s : rig.proxy->stats()) {
    descriptors += s.descriptors, posts += s.posts, passes += s.passes, busy += s.busy_passes, full += s.full_passes;
    run.clocks.push_back(proxy::read_cpu_clock_state(s.core));
    if (s.stamped_ns) run.posting_mmsgs += double(s.stamped_descriptors) * 1e3 / double(s.stamped_ns);
  }
  for (const auto& qp : rig.qps) {
    run.deepest_backlog = std::max(run.deepest_backlog, rig.softnic->counters(qp->qpn()).deepest_backlog);
  }
  run.passes.chain = posts ? double(descriptors) / double(posts) : 0;
  run.passes.busy_percent = passes ? 100.0 * double(busy) / double(passes) : 0;
  run.passes.full_percent = passes ? 100.0 * double(full) / double(passes) : 0;
  unsigned long long first = ~0ull, last = 0;
  for (uint32_t r = 0; r < c.rings; ++r) {
    if (t[r].status != 0) {
      run.failure = "producer of ring " + std::to_string(r) + ": " + (t[r].status == 1 ? "enqueue" : "completion") + " failed";
      return run;
    }
    first = std::min(first, t[r].start), last = std::max(last, t[r].end);
  }
  run.mmsgs = double(total) * 1e3 / double(last - first);
  uint64_t wrong = total;
  for (uint64_t i = 0; i < total && wrong == total; ++i) {
    if (destination[i] != i + 1) wrong = i;
  }
  run.valid = report.drained && wrong == total;
  if (!report.drained) run.failure = "proxy not drained: " + report.describe();
  else if (!run.valid) run.failure = "destination word " + std::to_string(wrong) + " holds " +
                                     std::to_string(destination[wrong]) + ", expected " + std::to_string(wrong + 1);
  return run;
}

// The host's cores first: T workers and T engine threads spin, so beyond the cores the point
// measures the scheduler.
// A held run (Point::holds_run): how far the host engine fell behind the workers over the run
// (rate_bound.h), as gpu-rate's held rows; the workers' passes cannot say it, none waited for room.
std::string bottleneck(const RateConfig& c, const Point& p, double rate, double ceiling,
                       const gpu::WorkerPasses& passes, uint64_t deepest, const softnic::TimingProfile& profile) {
  const uint32_t cores = this_machine().usable_cores, spinning = 2 * p.workers;
  if (spinning > cores) {
    return "host cores: " + std::to_string(spinning) + " spinning threads (" + std::to_string(p.workers) +
           " workers, " + std::to_string(p.workers) + " softnic engine threads) on " + std::to_string(cores) + " cores";
  }
  if (p.holds_run) {
    return gpu::held_run_bottleneck(rate, ceiling, deepest, worker_run_wqebbs(c, p));
  }
  return gpu::proxy_bottleneck(rate, ceiling, passes, profile, {p.workers, worker_sq_wqebbs(c, p)});
}

Result row_of(const RateConfig& c, const Point& p, const std::vector<PointRun>& runs) {
  Result r;
  r.experiment = "gpu-proxy-rate";
  r.label = "T=" + std::to_string(p.workers) + " R=" + std::to_string(c.rings) + " B=" + std::to_string(p.batch) +
            (p.holds_run ? gpu::HOLDING : "");
  r.engine = "host-thread";
  r.placement = "host";
  r.submitter = "gpu-thread (mini-proxy producer), host workers";
  r.pe_layout = "1 GPU, host workers, 1 softnic, loopback QP per worker";
  const uint64_t per_ring = messages_per_ring(c, p);
  const softnic::TimingProfile profile = softnic::timing_profile(c.nic_profile);
  r.knobs = {{"path", "mini-proxy"},
             {"handoff", "tuned"},
             {"workers (T)", std::to_string(p.workers)},
             {"rings (R)", std::to_string(c.rings)},
             {"producers", std::to_string(c.rings) + " GPU threads, one per ring (OwnedRing)"},
             {"batch (B)", std::to_string(p.batch)},
             {"message bytes", "8"},
             {"messages", std::to_string(per_ring * c.rings)},
             {"ring_entries", std::to_string(c.ring_entries)},
             {"completion counters", proxy::cuda::to_string(c.counters)},
             {"engine_threads", std::to_string(p.workers)},
             {"worker sq_wqebbs", std::to_string(worker_sq_wqebbs(c, p))},
             {"posting_rate", p.holds_run
                                  ? "the workers' own pace: each worker's send queue held its share of the run, so none "
                                    "waited for room (clock read at the first post and every 64th, rates summed)"
                                  : "the workers' pace between their first and last sampled posts, waits for send-queue "
                                    "room included"},
             {"nic_profile", softnic::profile_name(profile)}};
  Metric rate{"message rate", "Mmsg/s", {}}, chain{"descriptors per post", "descriptors", {}},
      busy{"worker busy passes", "%", {}}, full{"send queue full passes", "%", {}},
      posting{"posting rate", "Mmsg/s", {}}, backlog{"deepest backlog", "WQEBBs", {}};
  uint64_t deepest = 0;
  std::string failures;
  r.payload_validated = true;
  for (size_t k = 0; k < runs.size(); ++k) {
    const PointRun& run = runs[k];
    r.payload_validated = r.payload_validated && run.valid;
    if (!run.failure.empty()) failures += "run " + std::to_string(k) + ": " + run.failure + "; ";
    if (run.mmsgs > 0) rate.runs.push_back(summarize({run.mmsgs}));
    chain.runs.push_back(summarize({run.passes.chain}));
    busy.runs.push_back(summarize({run.passes.busy_percent}));
    full.runs.push_back(summarize({run.passes.full_percent}));
    if (run.posting_mmsgs > 0) posting.runs.push_back(summarize({run.posting_mmsgs}));
    backlog.runs.push_back(summarize({double(run.deepest_backlog)}));
    deepest = std::max(deepest, run.deepest_backlog);
  }
  const double ceiling = host_engine_ceiling(p.workers, p.workers, c.nic_profile);
  r.metrics = {rate, chain, busy, full, Metric{"model ceiling", "Mmsg/s", {summarize({ceiling})}}, backlog};
  if (!posting.runs.empty()) r.metrics.push_back(posting);
  if (profile.enabled && profile.message_rate_mps > 0) {
    r.metrics.push_back(Metric{"profile rate cap", "Mmsg/s", {summarize({profile.message_rate_mps})}});
  }
  if (!rate.runs.empty()) {
    const gpu::WorkerPasses median{chain.p50(), busy.p50(), full.p50()};
    r.knobs.push_back({"bottleneck", bottleneck(c, p, rate.p50(), ceiling, median, deepest, profile)});
  }
  r.knobs.push_back({"ceiling_note", "model ceiling: the softnic host engine's rate on pre-built 8 B writes with "
                                     "one thread per worker QP (host-nic-ceiling)"});
  if (!failures.empty()) r.knobs.push_back({"note", failures});
  r.environment = {{"worker pinning", runs.back().placement}};  // note_machine adds usable_cores
  add_clock_environment(runs.back().clocks, "", &r.environment);
  return r;
}

// The grid, then the batch sweep's points at T = 1 that the grid does not hold.
// The grid, then the batch sweep's points at T = 1 that the grid does not hold, then the grid's
// T = 1 points again with each worker queue holding the run (every point holds it under
// --deep-queue, and none is repeated).
std::vector<Point> points_of(const RateConfig& c) {
  std::vector<Point> points;
  for (uint64_t b : c.batches) {
    for (uint64_t t : c.workers) points.push_back({static_cast<uint32_t>(t), static_cast<uint32_t>(b), c.deep});
  }
  for (uint64_t b : c.batch_sweep) {
    const bool in_grid = std::any_of(points.begin(), points.end(), [&](const Point& p) { return p.workers == 1 && p.batch == b; });
    if (!in_grid) points.push_back({1, static_cast<uint32_t>(b), c.deep});
  }
  if (c.deep) return points;
  for (uint64_t b : c.batches) {
    if (std::find(c.workers.begin(), c.workers.end(), 1u) != c.workers.end()) {
      points.push_back({1, static_cast<uint32_t>(b), true});
    }
  }
  return points;
}

RateConfig read_config(const Arguments& a) {
  const bool quick = a.flag("quick", "T = 1, 2, 4, 8, 2^19 messages a point, one run");
  RateConfig c;
  c.workers = a.integers("workers", quick ? std::vector<uint64_t>{1, 2, 4, 8} : std::vector<uint64_t>{1, 2, 3, 4, 5, 6, 7, 8},
                         1, 64, "worker counts T of the grid");
  c.batches = a.integers("batches", {1, 16}, 1, 64, "batches B of the grid (descriptors a worker chains per post)");
  c.batch_sweep = a.integers("batch-sweep", {1, 2, 4, 8, 16}, 1, 64, "batches run at T = 1 besides the grid (the paper's T = 1, R = 32 sweep)");
  c.rings = static_cast<uint32_t>(a.integer("rings", 32, 1, 1024, "rings R, one GPU producer each; ring r is served by worker r % T"));
  c.ring_entries = static_cast<uint32_t>(a.power_of_two("ring-entries", 1024, 1u << 20, flag_help::RING_ENTRIES));
  c.messages = a.integer("messages", quick ? 1u << 19 : 1u << 21, 1024, 1ull << 28, "8 B messages per point and run, all producers");
  c.runs = static_cast<uint32_t>(a.integer("runs", quick ? 1 : 3, 1, 100, flag_help::RUNS));
  c.deep = a.flag("deep-queue",
                  "size every worker QP's send queue to hold its share of the run (at most 32,768 WQEBBs, "
                  "the run cut to fit): no worker waits for room, so the posting rate is the workers' own pace "
                  "(without it the grid's T = 1 points are repeated that way)");
  const std::string counters = a.choice("counters", "host", {"host", "gpu"},
                                        "completion counters in mapped host memory or GPU-preferred managed memory");
  c.counters = counters == "gpu" ? proxy::cuda::CounterPlacement::gpu : proxy::cuda::CounterPlacement::host;
  const std::string cores = a.text("cores", "", "pin the proxy workers to these CPUs, a list such as 0-3,8 "
                                                 "(default: the GPU's NUMA node's cores when sysfs names it, else unpinned)");
  c.cores = cores.empty() ? std::vector<int>{} : proxy::parse_cpu_list(cores);
  c.device = static_cast<int>(a.integer("device", 0, 0, 64, flag_help::DEVICE));
  c.nic_profile = a.text("nic-profile", "fast", flag_help::NIC_PROFILE);
  softnic::timing_profile(c.nic_profile);  // refused here, by name, before anything runs
  for (uint64_t t : c.workers) {
    if (t > c.rings) throw InvalidArgument("gpu-proxy-rate: --workers " + std::to_string(t) + " exceeds --rings " +
                                           std::to_string(c.rings) + " (a worker without a ring)");
  }
  return c;
}

int run_gpu_proxy_rate(const Arguments& a, Report& report) {
  a.provider({"softnic"});
  const RateConfig c = read_config(a);
  a.check_all_used();
  if (skip_without_cuda_device()) return 0;
  const std::vector<Point> points = points_of(c);
  Progress progress("gpu-proxy-rate", points.size());
  bool valid = true;
  for (const Point& p : points) {
    std::vector<PointRun> runs;
    for (uint32_t k = 0; k < c.runs; ++k) runs.push_back(run_point(c, p));
    Result r = row_of(c, p, runs);
    valid = valid && r.payload_validated;
    progress.done(r.label);
    report.add(std::move(r));
  }
  if (!valid) throw Error("gpu-proxy-rate: payload validation failed (see the rows with payload_validated false)");
  return 0;
}

const bool registered = register_experiment(
    {"gpu-proxy-rate",
     "Figure 7, GPU producers: 8 B mini-proxy rate against workers T at B = 1 and 16 over R = 32 rings, and the "
     "T = 1 batch sweep, beside the host engine's ceiling",
     run_gpu_proxy_rate, true});

}  // namespace
}  // namespace dissect::bench
