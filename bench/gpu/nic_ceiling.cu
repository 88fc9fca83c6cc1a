// The model's capacity, measured with no submitter in the way: every QP's send queue is filled
// with `depth` WQEs by one kernel (not timed), then one thread per QP stores the doorbell record
// and the doorbell at t0 and polls the QP's one signalled CQE (the last WQE) until t1. The rate of
// a round is Q * depth / (max t1 - min t0), on %globaltimer. QPs are connected to themselves
// (loopback), so the engine executes every write of one NIC. Latency: one QP, one signalled 8 B
// inline write at a time, t0 just before the doorbell store, t1 when its CQE is seen.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "dissect/bench/experiment.h"
#include "dissect/bench/flag_help.h"
#include "dissect/bench/gpu_pe.h"
#include "dissect/bench/progress.h"
#include "dissect/common/clock.h"
#include "dissect/common/cuda.h"
#include "dissect/common/wait.h"
#include "dissect/gda/gda.h"
#include "dissect/softnic/cqe_times.h"
#include "dissect/softnic/gpu_engine.h"
#include "gpu_command.h"
#include "harness.cuh"
#include "loopback_qps.h"
#include "nic_ceiling.h"

namespace dissect::bench {
namespace {

constexpr uint32_t SLOTS_PER_QP = 64;  // destination slots per QP; WQE i writes slot i % 64

using gpu::LoopbackQps;
using Target = gpu::LoopbackTarget;

DISSECT_HD inline uint64_t value_of(uint64_t index, uint32_t qp) {
  return (index * 0x9e3779b97f4a7c15ull) ^ (uint64_t{qp} << 48) ^ 1;
}

// One warp per QP builds WQEs [base, base + depth); only the last is signalled.
__global__ void fill_kernel(const Target* targets, uint32_t depth, uint64_t base, uint32_t bytes) {
  const Target t = targets[blockIdx.x];
  for (uint32_t i = threadIdx.x; i < depth; i += blockDim.x) {
    const uint64_t index = base + i;
    const uint64_t slot = (index % SLOTS_PER_QP) * bytes;
    const auto completion = i + 1 == depth ? gda::Completion::signaled : gda::Completion::unsignaled;
    if (bytes <= 8) {
      gda::write_rdma_write_value_wqe(t.qp, index, value_of(index, blockIdx.x), bytes,
                                      reinterpret_cast<uint64_t>(t.dst + slot), t.rkey, completion);
    } else {
      gda::write_rdma_write_wqe(t.qp, index,
                                gda::WriteRequest{reinterpret_cast<uint64_t>(t.src + slot), t.lkey,
                                                  bytes, reinterpret_cast<uint64_t>(t.dst + slot),
                                                  t.rkey},
                                completion);
    }
  }
}

// A round rings every QP at once, so its last CQEs wait for the engine to execute all of them:
// twice the bound of one wait.
constexpr uint64_t ROUND_TIMEOUT_NS = 2 * DEFAULT_WAIT_TIMEOUT_NS;

// Until CQE `n` of qp's send CQ is the software's, within `timeout_ns` (common/wait.h's one bound,
// checked with over(): the latency kernel times this wait, so it spins bare, as before).
__device__ bool wait_cqe(const nic::QpHandle& qp, uint64_t n, uint64_t timeout_ns) {
  BoundedWait wait(timeout_ns);
  const mlx5::mlx5_cqe64* cqe = &qp.send_cq.cqes[n & (qp.send_cq.cqe_count - 1)];
  for (;;) {
    const uint32_t word = load_acquire<Scope::gpu>(
        reinterpret_cast<uint32_t*>(const_cast<mlx5::mlx5_cqe64*>(cqe)) + 15);
    const uint8_t op_own = static_cast<uint8_t>(word >> 24);
    if (mlx5::cqe_is_sw_owned(op_own, n, qp.send_cq.cqe_count)) {
      return mlx5::cqe_opcode(op_own) == mlx5::MLX5_CQE_REQ;
    }
    if (wait.over()) return false;
  }
}

struct RoundTimes {
  unsigned long long start, end;
  uint32_t ok;
};

// Thread j rings QP j up to `end` and waits for CQE number `cqe`.
__global__ void ring_kernel(const Target* targets, uint32_t count, uint64_t end, uint64_t cqe,
                            RoundTimes* times) {
  const uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= count) return;
  const nic::QpHandle qp = targets[j].qp;
  const uint64_t t0 = now_ns();
  gda::store_doorbell_pair<gda::ordering::gpu_fence>(qp, end);
  const bool ok = wait_cqe(qp, cqe, ROUND_TIMEOUT_NS);
  times[j] = RoundTimes{t0, now_ns(), ok ? 1u : 0u};
}

// Sample i: {doorbell to CQE seen, doorbell to the CQE's timestamp}. The model stamps a CQE with
// %globaltimer as its window's payloads go out (express.h; the staged window: just before the CQE
// is written, window.h), the clock t0 is read from, so
// the two split the time at the engine's side: the doorbell's way to the engine and the engine's
// window up to its CQE, then the CQE's release and the poller's sight of it. The softnic's CQE
// extension (dissect/softnic/cqe_times.h) splits the first part once more: when the engine saw the
// doorbell (the start of the pass whose read saw it; under a profile the clock after that read)
// and the date it gave the ring, both relative to the stamp, and the path that wrote the CQE.
struct LatencySample {
  unsigned long long seen, stamped;
  uint32_t rung_to_stamp, seen_to_stamp;  // softnic::CqeTimes
  uint32_t path;
};

__global__ void latency_kernel(Target t, uint32_t iterations, LatencySample* samples, uint32_t* ok) {
  uint32_t good = 1;
  for (uint32_t i = 0; i < iterations && good; ++i) {
    gda::write_rdma_write_value_wqe(t.qp, i, value_of(i, 0), 8, reinterpret_cast<uint64_t>(t.dst),
                                    t.rkey, gda::Completion::signaled);
    gda::ordering::gpu_fence::store_dbrec(&t.qp.dbrec_send->raw, mlx5::dbrec_value(i + 1).raw);
    const uint64_t t0 = now_ns();
    gda::ordering::gpu_fence::store_doorbell(t.qp.doorbell, mlx5::doorbell_value(i + 1, t.qp.qpn));
    good = wait_cqe(t.qp, i, DEFAULT_WAIT_TIMEOUT_NS);
    const uint64_t t1 = now_ns();
    const mlx5::mlx5_cqe64& cqe = t.qp.send_cq.cqes[i & (t.qp.send_cq.cqe_count - 1)];
    const uint64_t stamp = cqe.timestamp.value();
    const softnic::CqeTimes times = softnic::cqe_times(cqe);
    samples[i] = LatencySample{t1 - t0, stamp - t0, times.rung_to_stamp_ns, times.seen_to_stamp_ns, times.path};
  }
  *ok = good;
}

constexpr uint32_t MAX_LATENCY_SAMPLES = 4096;

// The QPs and the kernels' scratch memory, allocated before the engine starts (loopback_qps.h).
struct Setup {
  std::unique_ptr<LoopbackQps> qps;
  RoundTimes* times = nullptr;
  LatencySample* samples = nullptr;
  uint32_t* ok = nullptr;
};

Setup make_setup(const NicCeilingConfig& c, uint32_t qps, uint32_t bytes, uint32_t depth,
                 bool doorbell_dates = false) {
  gpu::LoopbackOptions o;
  o.doorbell_dates = doorbell_dates;
  o.device = c.device;
  o.engine_ctas = c.engine_ctas;
  o.engine_warps_per_cta = c.engine_warps_per_cta;
  o.nic_profile = c.nic_profile;
  o.qps = qps;
  o.sq_wqebbs = std::max<uint32_t>(depth, 64);
  o.buffer_bytes = size_t{SLOTS_PER_QP} * std::max<uint32_t>(bytes, 8);
  Setup s;
  s.qps = std::make_unique<LoopbackQps>(o);
  s.times = static_cast<RoundTimes*>(s.qps->scratch(sizeof(RoundTimes) * qps));
  s.samples = static_cast<LatencySample*>(s.qps->scratch(sizeof(LatencySample) * MAX_LATENCY_SAMPLES));
  s.ok = static_cast<uint32_t*>(s.qps->scratch(sizeof(uint32_t)));
  s.qps->start({reinterpret_cast<const void*>(&fill_kernel),
                reinterpret_cast<const void*>(&ring_kernel),
                reinterpret_cast<const void*>(&latency_kernel)},
               "nic-ceiling kernels");
  return s;
}

Result base(const NicCeilingConfig& c, const std::string& label) {
  Result r;
  r.experiment = "nic-ceiling";
  r.label = label;
  r.engine = "gpu-kernel";
  r.placement = "gpu";
  r.submitter = "none (pre-built WQEs, one doorbell per QP)";
  r.pe_layout = "1 NIC, loopback QPs, 1 GPU";
  r.knobs = {{"engine_ctas", std::to_string(c.engine_ctas)},
             {"engine_warps_per_cta", std::to_string(c.engine_warps_per_cta)},
             {"engine_warps", std::to_string(c.engine_ctas * c.engine_warps_per_cta)},
             {"nic_profile", softnic::profile_name(softnic::timing_profile(c.nic_profile))}};
  return r;
}

Result measure_latency(const NicCeilingConfig& c) {
  Result r = base(c, "doorbell to CQE, 1 QP, 8 B inline");
  r.knobs.push_back({"doorbell_dates", "on (SoftNicOptions::doorbell_dates: the CQE extension's hops)"});
  Metric latency{"doorbell to CQE", "us", {}};
  Metric stamped{"doorbell to CQE stamped", "us", {}};  // the model's CQE timestamp (latency_kernel)
  // Each hop on its own (softnic::CqeTimes; samples whose CQE kept the times): the doorbell's way
  // to the pass that saw it, the engine from that pass to the stamp, the CQE's way to the poller;
  // and where the engine dated the ring (t0 at 0; up to one pass before it, never after the pass
  // that saw it). A hop the engine did not keep has no samples.
  Metric to_seen{"doorbell to seen", "us", {}};
  Metric seen_to_stamp{"seen to stamp", "us", {}};
  Metric stamp_to_seen{"stamp to CQE seen", "us", {}};
  Metric ring_date{"doorbell to ring date", "us", {}};
  // The path that wrote each sample's CQE (softnic::CqePath), as a share of the samples: proof of
  // which window executed the latency case.
  Metric lone{"CQEs by the lone window", "%", {}};
  Metric express{"CQEs by the express window", "%", {}};
  Metric staged{"CQEs by the staged window", "%", {}};
  Metric other_path{"CQEs by another path", "%", {}};
  bool valid = true;
  for (uint32_t run = 0; run < c.runs; ++run) {
    Setup s = make_setup(c, 1, 8, 4096, true);  // the hops need the doorbells' dates
    LoopbackQps& q = *s.qps;
    const uint32_t n = std::min<uint32_t>(c.latency_iterations, MAX_LATENCY_SAMPLES);
    latency_kernel<<<1, 1, 0, q.stream()>>>(q.host_targets()[0], n, s.samples, s.ok);
    check_cuda(cudaGetLastError(), "latency_kernel");
    q.synchronize("latency_kernel");
    std::vector<LatencySample> h(n);
    uint32_t good = 0;
    q.read(h.data(), s.samples, n);
    q.read(&good, s.ok, 1);
    valid = valid && good;
    std::vector<double> seen, at_stamp, hop_seen, hop_window, hop_cqe, dated;
    uint32_t paths[5] = {}, kept = 0;
    for (uint32_t i = n / 10; i < n; ++i) {  // first 10 %: warm-up
      const LatencySample& x = h[i];
      const double stamp_us = double(static_cast<long long>(x.stamped)) / 1e3;
      seen.push_back(double(x.seen) / 1e3);
      at_stamp.push_back(stamp_us);
      hop_cqe.push_back(double(x.seen) / 1e3 - stamp_us);
      ++kept;
      ++paths[x.path < 5 ? x.path : 0];
      if (x.seen_to_stamp != softnic::CQE_TIME_UNKNOWN) {
        hop_seen.push_back(stamp_us - x.seen_to_stamp / 1e3);
        hop_window.push_back(x.seen_to_stamp / 1e3);
      }
      if (x.rung_to_stamp != softnic::CQE_TIME_UNKNOWN) dated.push_back(stamp_us - x.rung_to_stamp / 1e3);
    }
    latency.runs.push_back(summarize(seen));
    stamped.runs.push_back(summarize(at_stamp));
    stamp_to_seen.runs.push_back(summarize(hop_cqe));
    if (!hop_seen.empty()) to_seen.runs.push_back(summarize(hop_seen));
    if (!hop_window.empty()) seen_to_stamp.runs.push_back(summarize(hop_window));
    if (!dated.empty()) ring_date.runs.push_back(summarize(dated));
    auto share = [&](uint32_t count) { return summarize({kept ? 100.0 * count / kept : 0.0}); };
    lone.runs.push_back(share(paths[softnic::CQE_PATH_LONE]));
    express.runs.push_back(share(paths[softnic::CQE_PATH_EXPRESS]));
    staged.runs.push_back(share(paths[softnic::CQE_PATH_STAGED]));
    other_path.runs.push_back(share(paths[softnic::CQE_PATH_NONE] + paths[softnic::CQE_PATH_ONE_AT_A_TIME]));
  }
  r.metrics = {latency, stamped, stamp_to_seen, lone, express, staged, other_path};
  for (Metric* m : {&to_seen, &seen_to_stamp, &ring_date}) {
    if (!m->runs.empty()) r.metrics.push_back(*m);
  }
  r.payload_validated = valid;
  return r;
}

}  // namespace

// One (QPs, size) point: `runs` runs of `rounds` rounds each.
Result measure_nic_ceiling_rate(const NicCeilingConfig& c, uint32_t qps, uint32_t bytes) {
  const uint32_t depth = bytes <= 8 ? c.depth : std::min<uint32_t>(c.depth, 1024);
  Result r = base(c, std::to_string(qps) + " QPs, " + std::to_string(bytes) + " B " +
                         (bytes <= 8 ? "inline" : "pointer"));
  r.knobs.push_back({"qps", std::to_string(qps)});
  r.knobs.push_back({"payload_bytes", std::to_string(bytes)});
  r.knobs.push_back({"wqes_per_qp_per_round", std::to_string(depth)});
  const bool paced = softnic::timing_profile(c.nic_profile).enabled != 0;
  r.knobs.push_back({"doorbell_dates", c.rate_doorbell_dates || paced ? "on" : "off"});
  Metric rate{"message rate", "Mmsg/s", {}}, goodput{"payload rate", "GB/s", {}};
  bool valid = true;
  for (uint32_t run = 0; run < c.runs; ++run) {
    Setup s = make_setup(c, qps, bytes, depth, c.rate_doorbell_dates);
    LoopbackQps& q = *s.qps;
    RoundTimes* times = s.times;
    std::vector<double> rates, rates_bytes;
    for (uint32_t round = 0; round < c.rounds + 1; ++round) {  // round 0 is warm-up
      const uint64_t begin = uint64_t{round} * depth;
      fill_kernel<<<qps, 128, 0, q.stream()>>>(q.targets(), depth, begin, bytes);
      check_cuda(cudaGetLastError(), "fill_kernel");
      const uint32_t threads = std::min<uint32_t>(qps, 128);
      ring_kernel<<<(qps + threads - 1) / threads, threads, 0, q.stream()>>>(
          q.targets(), qps, begin + depth, round, times);
      check_cuda(cudaGetLastError(), "ring_kernel");
      q.synchronize("nic-ceiling round");
      std::vector<RoundTimes> t(qps);
      q.read(t.data(), times, qps);
      unsigned long long first = ~0ull, last = 0;
      for (const auto& x : t) {
        valid = valid && x.ok;
        first = std::min(first, x.start);
        last = std::max(last, x.end);
      }
      if (round == 0 || last <= first) continue;
      const double seconds = double(last - first) * 1e-9;
      rates.push_back(double(qps) * depth / seconds / 1e6);
      rates_bytes.push_back(double(qps) * depth * bytes / seconds / 1e9);
    }
    rate.runs.push_back(summarize(rates));
    goodput.runs.push_back(summarize(rates_bytes));
    if (bytes > 8) {  // pointer writes: every destination slot equals its source slot
      for (const Target& t : q.host_targets()) {
        std::vector<uint8_t> a(size_t{SLOTS_PER_QP} * bytes), b(a.size());
        q.read(a.data(), t.src, a.size());
        q.read(b.data(), t.dst, b.size());
        valid = valid && a == b;
      }
    } else {
      const uint64_t last_round = c.rounds;
      for (uint32_t j = 0; j < qps && valid; ++j) {
        std::vector<uint64_t> d(SLOTS_PER_QP);
        q.read(d.data(), reinterpret_cast<const uint64_t*>(q.host_targets()[j].dst), d.size());
        for (uint32_t i = depth - SLOTS_PER_QP; i < depth; ++i) {
          const uint64_t index = last_round * depth + i;
          const uint64_t mask = bytes >= 8 ? ~0ull : (1ull << (8 * bytes)) - 1;
          valid = valid && (d[index % SLOTS_PER_QP] & mask) == (value_of(index, j) & mask);
        }
      }
    }
  }
  r.metrics = {rate, goodput};
  r.payload_validated = valid;
  return r;
}

double nic_model_ceiling(int device, uint32_t engine_ctas, uint32_t engine_warps_per_cta,
                         const std::string& nic_profile, uint32_t qps, uint32_t bytes) {
  using Key = std::tuple<int, uint32_t, uint32_t, std::string, uint32_t, uint32_t>;
  static std::map<Key, double> seen;
  const Key key{device, engine_ctas, engine_warps_per_cta, nic_profile, qps, bytes};
  if (auto it = seen.find(key); it != seen.end()) return it->second;
  NicCeilingConfig n;
  n.device = device;
  n.engine_ctas = engine_ctas;
  n.engine_warps_per_cta = engine_warps_per_cta;
  n.nic_profile = nic_profile;
  n.rounds = 4;
  n.runs = 1;
  return seen[key] = measure_nic_ceiling_rate(n, qps, bytes).metrics.at(0).p50();
}

std::vector<Result> run_nic_ceiling(const NicCeilingConfig& config) {
  std::vector<Result> out;
  auto finished = [&](Result r) {
    if (config.case_done) config.case_done(r.label);
    out.push_back(std::move(r));
  };
  finished(measure_latency(config));
  for (uint32_t bytes : config.sizes) {
    for (uint32_t qps : config.qps) finished(measure_nic_ceiling_rate(config, qps, bytes));
  }
  const double step = gpu::measure_globaltimer_step(config.device);
  for (auto& r : out) r.environment.push_back({"globaltimer_step_ns", std::to_string(step)});
  return out;
}

namespace {

std::vector<uint32_t> integer_list(const Arguments& a, const std::string& name,
                                   const std::vector<uint32_t>& fallback, uint32_t min,
                                   uint32_t max, const std::string& about) {
  const std::vector<uint64_t> wide(fallback.begin(), fallback.end());
  std::vector<uint32_t> out;
  for (uint64_t v : a.integers(name, wide, min, max, about)) out.push_back(static_cast<uint32_t>(v));
  return out;
}

// parse: the flags into a NicCeilingConfig, refused by name before anything runs.
NicCeilingConfig parse_nic_ceiling(const Arguments& a) {
  a.provider({"softnic"});
  // --raw needs nothing here: main's set_keep_raw_samples reaches summarize(), which keeps the
  // latency's samples and each run's per-round rates.
  NicCeilingConfig c;
  const bool quick = a.flag("quick", "QPs 1 and 64, sizes 8 and 4096 B, 4 rounds, 2 runs");
  c.device = static_cast<int>(a.integer("device", 0, 0, 64, flag_help::DEVICE));
  c.engine_ctas = static_cast<uint32_t>(a.integer("engine-ctas", c.engine_ctas, 1, 1024, flag_help::ENGINE_CTAS));
  c.engine_warps_per_cta = static_cast<uint32_t>(a.integer(
      "engine-warps", c.engine_warps_per_cta, 1, softnic::MAX_ENGINE_WARPS_PER_CTA, flag_help::ENGINE_WARPS));
  c.qps = integer_list(a, "qps", quick ? std::vector<uint32_t>{1, 64} : c.qps, 1, 1024,
                       "loopback QP counts, a comma list: every one is measured at every size");
  c.sizes = integer_list(a, "sizes", quick ? std::vector<uint32_t>{8, 4096} : c.sizes, 1, 1u << 20,
                         "payload of each write, bytes, a comma list (8 and below: inline from a register)");
  c.depth = static_cast<uint32_t>(
      a.power_of_two("depth", c.depth, 32768, "WQEs per QP per round, rung with one doorbell, the last signalled"));
  c.rounds = static_cast<uint32_t>(a.integer("rounds", quick ? 4 : c.rounds, 1, 1000,
                                             "timed rounds per run, after one warm-up round"));
  c.nic_profile = a.text("nic-profile", "fast", flag_help::NIC_PROFILE);
  softnic::timing_profile(c.nic_profile);  // refused here, by name, before anything runs
  c.runs = static_cast<uint32_t>(a.integer("runs", quick ? 2 : c.runs, 1, 100, flag_help::RUNS));
  c.rate_doorbell_dates = a.flag("doorbell-dates",
                                 "the rate cases date every doorbell as the latency case does (its cost: "
                                 "a clock read a pass); a timing profile always does");
  a.check_all_used();
  return c;
}

int run_nic_ceiling_command(const Arguments& a, Report& report) {
  NicCeilingConfig c = parse_nic_ceiling(a);
  if (skip_without_cuda_device()) return 0;
  Progress progress("nic-ceiling", nic_ceiling_cases(c));
  c.case_done = [&progress](const std::string& label) { progress.done(label); };
  return add_results(report, run_nic_ceiling(c));
}

const bool registered = register_experiment(
    {"nic-ceiling", "the NIC model's own capacity: msg/s and GB/s by QP count and payload, doorbell-to-CQE latency",
     run_nic_ceiling_command, true});

}  // namespace
}  // namespace dissect::bench
