// `dissect gpu-completion-scope`: Figure 4, what the completion scope costs as QPs are added. One
// GPU thread puts 8 B on QP 0 of Q configured QPs and waits for it either on QP 0 alone (per-QP
// quiet, DeepEP's port) or on every configured QP (gda::quiet over the QpSet: NVSHMEM's PE-wide
// quiet, which checks each QP even where nothing is outstanding). A signal-based round trip (data
// and a flag put on one QP, the peer thread waits for the flag and answers the same way, no quiet)
// is the control that stays flat. Timed with %globaltimer per operation; the growth per QP of the
// all-QP curve is fitted and recorded. --cq shared: the Q QPs share one send CQ, so every quiet
// polls one ring whichever QP it waits on.
#include <cstdio>
#include <string>
#include <vector>

#include "dissect/bench/experiment.h"
#include "dissect/bench/flag_help.h"
#include "dissect/bench/progress.h"
#include "dissect/common/clock.h"
#include "dissect/common/error.h"
#include "dissect/common/wait.h"
#include "dissect/gda/gda.h"
#include "dissect/softnic/gpu_engine.h"
#include "gpu_command.h"
#include "harness.cuh"
#include "loopback_qps.h"
#if DISSECT_HAVE_NVSHMEM_IBGDA
#include "peer_scope.h"  // --path nvshmem-ibgda (bench/gpu/peers/nvshmem_scope.cu)
#endif

namespace dissect::bench {
namespace {

using gpu::LoopbackQps;
using gpu::LoopbackTarget;
using Policy = gda::ordering::gpu_fence;
constexpr auto kExclusive = gda::Sharing::exclusive;
constexpr uint32_t SLOTS = 64;

enum class Wait : uint32_t { per_qp, all_qps };

// One run of put_completion_kernel: `n` puts on QP 0 of `qps` (targets, handles), each waited for
// as `wait` says; samples[i] in ns, the first failed gda::Status in *failure.
struct PutCompletionArgs {
  const LoopbackTarget* targets;
  const nic::QpHandle* handles;
  uint32_t qps;
  Wait wait;
  uint32_t n;
  unsigned long long* samples;
  uint32_t* failure;
};

__global__ void put_completion_kernel(PutCompletionArgs args) {
  const LoopbackTarget* const targets = args.targets;
  const nic::QpHandle* const handles = args.handles;
  const uint32_t qps = args.qps, n = args.n;
  const Wait wait = args.wait;
  unsigned long long* const samples = args.samples;
  uint32_t* const failure = args.failure;
  const LoopbackTarget t = targets[0];
  const gda::QpSet all{handles, qps};
  for (uint32_t i = 0; i < n; ++i) {
    const uint64_t t0 = now_ns();
    uint64_t end = 0;
    gda::Status s = gda::put_value<Policy, kExclusive>(
        t.qp, uint64_t{i} + 1, 8, reinterpret_cast<uint64_t>(t.dst + 8 + 8 * (i % SLOTS)), t.rkey,
        gda::Completion::signaled, &end);
    if (s == gda::Status::ok) {
      s = wait == Wait::all_qps ? gda::quiet<Policy, kExclusive>(all)
                                : gda::quiet<Policy, kExclusive>(t.qp);
    }
    samples[i] = now_ns() - t0;
    if (s != gda::Status::ok) {
      *failure = static_cast<uint32_t>(s);
      return;
    }
  }
}

// Slot 1 + j of QP 0's destination (slot 0 is the round trip's flag) holds the last put to it.
bool put_values_landed(const LoopbackQps& q, uint32_t n) {
  std::vector<uint64_t> slots(SLOTS + 1);
  q.read(slots.data(), reinterpret_cast<const uint64_t*>(q.host_targets()[0].dst), SLOTS + 1);
  for (uint32_t i = n > SLOTS ? n - SLOTS : 0; i < n; ++i) {
    if (slots[1 + i % SLOTS] != uint64_t{i} + 1) return false;
  }
  return true;
}

// CTA 0 (the initiator, QP 0) and CTA 1 (the responder, QP `qps`, its own): round i puts the data
// and the flag value i on one QP, one doorbell; the other side waits for its flag to read i.
__global__ void signal_round_trip_kernel(const LoopbackTarget* targets, uint32_t qps, uint32_t n,
                                         unsigned long long* samples, uint32_t* failure) {
  const bool initiator = blockIdx.x == 0;
  const LoopbackTarget me = targets[initiator ? 0 : qps];
  const LoopbackTarget peer = targets[initiator ? qps : 0];
  uint64_t* my_flag = reinterpret_cast<uint64_t*>(peer.dst);  // the peer's QP writes my flag
  gda::OwnedQp q = gda::own(me.qp);
  auto send = [&](uint32_t round) {
    uint64_t end = 0;
    return gda::post_values<Policy, kExclusive>(
        q, 2, 8, me.rkey, [&](uint32_t k) { return k == 0 ? ~uint64_t{round} : uint64_t{round}; },
        [&](uint32_t k) {
          return reinterpret_cast<uint64_t>(k == 0 ? me.dst + 8 + 8 * (round % SLOTS) : me.dst);
        },
        &end);
  };
  for (uint32_t i = 1; i <= n; ++i) {
    const uint64_t t0 = now_ns();
    if (initiator && send(i) != gda::Status::ok) break;
    BoundedWait wait;  // DEFAULT_WAIT_TIMEOUT_NS, the bound of every gda wait
    bool timed_out = false;
    while (load_acquire<Scope::gpu>(my_flag) < i) {
      if (wait.expired()) {
        timed_out = true;
        break;
      }
    }
    if (timed_out) {
      atomicCAS(failure, 0u, static_cast<uint32_t>(gda::Status::timeout));
      break;
    }
    if (!initiator && send(i) != gda::Status::ok) break;
    if (initiator) samples[i - 1] = now_ns() - t0;
  }
  gda::disown(q);
}

struct Point {
  std::string label;
  Metric metric;
  bool valid = true;
};

double slope(const std::vector<double>& x, const std::vector<double>& y) {
  double mx = 0, my = 0, sxy = 0, sxx = 0;
  for (size_t i = 0; i < x.size(); ++i) mx += x[i], my += y[i];
  mx /= x.size(), my /= y.size();
  for (size_t i = 0; i < x.size(); ++i) sxy += (x[i] - mx) * (y[i] - my), sxx += (x[i] - mx) * (x[i] - mx);
  return sxx > 0 ? sxy / sxx : 0;
}

struct ScopeConfig {
  std::vector<uint32_t> qps;
  uint32_t iterations, warmup, runs;
  gpu::LoopbackOptions nic;
  std::string path = "mini-gda";  // or nvshmem-ibgda: its quiets, no round trip (peer_scope.h)
  bool shared_cq = false;         // the Q QPs share one send CQ (nic.h CompletionQueue)
  std::string library, library_version;
};

// One run of the three measurements at `qps` QPs; samples in us after the warm-up.
void measure(const ScopeConfig& c, uint32_t qps, std::vector<Metric>& metrics, bool& valid) {
#if DISSECT_HAVE_NVSHMEM_IBGDA
  if (c.path == "nvshmem-ibgda") {
    return measure_nvshmem_scope(c.nic, qps, c.warmup, c.iterations, metrics[0], metrics[1], valid);
  }
#endif
  gpu::LoopbackOptions o = c.nic;
  o.qps = qps + 1;  // + the responder's QP of the round trip
  o.shared_cq_qps = c.shared_cq ? qps : 0;
  LoopbackQps q(o);
  const uint32_t n = c.warmup + c.iterations;
  auto* samples = static_cast<unsigned long long*>(q.scratch(8 * size_t{n}));
  auto* failure = static_cast<uint32_t*>(q.scratch(4));
  q.start({reinterpret_cast<const void*>(&put_completion_kernel),
           reinterpret_cast<const void*>(&signal_round_trip_kernel)},
          "gpu-completion-scope kernels");
  for (uint32_t m = 0; m < 3; ++m) {
    if (m < 2) {
      put_completion_kernel<<<1, 1, 0, q.stream()>>>(PutCompletionArgs{
          q.targets(), q.handles(), qps, m == 0 ? Wait::per_qp : Wait::all_qps, n, samples, failure});
    } else {
      signal_round_trip_kernel<<<2, 1, 0, q.stream()>>>(q.targets(), qps, n, samples, failure);
    }
    check_cuda(cudaGetLastError(), "gpu-completion-scope launch");
    q.wait("gpu-completion-scope kernel");
    uint32_t failed = 0;
    q.read(&failed, failure, 1);
    std::vector<unsigned long long> ns(n);
    q.read(ns.data(), samples, n);
    if (failed != 0) {
      valid = false;
      continue;
    }
    if (m < 2) valid = valid && put_values_landed(q, n);
    std::vector<double> us;
    for (uint32_t i = c.warmup; i < n; ++i) us.push_back(double(ns[i]) / 1e3);
    metrics[m].runs.push_back(summarize(us));
  }
}

// parse: the flags into a ScopeConfig, refused by name before anything runs.
ScopeConfig parse_completion_scope(const Arguments& a) {
  a.provider({"softnic"});
  const bool quick = a.flag("quick", "300 timed operations and one run");
  ScopeConfig c;
  c.qps.clear();
  for (uint64_t v : a.integers("qps", {1, 2, 4, 8, 16, 32}, 1, 527,
                                 "configured QP counts Q, a comma list (Figure 4's x axis)")) {
    c.qps.push_back(static_cast<uint32_t>(v));
  }
  c.iterations = static_cast<uint32_t>(a.integer("iterations", quick ? 300 : 1000, 10, 1'000'000,
                                                          "timed operations per Q and run"));
  c.warmup = static_cast<uint32_t>(a.integer("warmup", 200, 10, 1'000'000, "operations per Q and run before the timed ones, discarded"));
  c.runs = static_cast<uint32_t>(a.integer("runs", quick ? 1 : 3, 1, 100, flag_help::RUNS));
  c.nic.device = static_cast<int>(a.integer("device", 0, 0, 64, flag_help::DEVICE));
  c.nic.engine_ctas = static_cast<uint32_t>(a.integer("engine-ctas", c.nic.engine_ctas, 1, 1024, flag_help::ENGINE_CTAS));
  c.nic.engine_warps_per_cta = static_cast<uint32_t>(
      a.integer("engine-warps", c.nic.engine_warps_per_cta, 1, softnic::MAX_ENGINE_WARPS_PER_CTA,
                flag_help::ENGINE_WARPS));
  c.nic.nic_profile = a.text("nic-profile", "fast", flag_help::NIC_PROFILE);
  softnic::timing_profile(c.nic.nic_profile);
  c.nic.sq_wqebbs = 1024;
  c.nic.buffer_bytes = 8 * (SLOTS + 1);
  c.path = a.choice("path", "mini-gda", {"mini-gda", "nvshmem-ibgda"},
                    "whose quiet: mini-gda's gda::quiet, or NVSHMEM's own (IBGDA internals)");
  c.shared_cq = a.choice("cq", "own", {"own", "shared"},
                         "send CQs: one per QP, or one the Q QPs share (mini-gda only)") == "shared";
  a.check_all_used();
  if (c.shared_cq && c.path != "mini-gda") {
    throw InvalidArgument("--cq shared --path " + c.path + ": NVSHMEM's quiet polls one collapsed "
                          "CQ per QP; a shared CQ is mini-gda's (--path mini-gda)");
  }
#if DISSECT_HAVE_NVSHMEM_IBGDA
  c.library = scope_path_library(c.path, &c.library_version);
#else
  if (c.path != "mini-gda") {
    throw InvalidArgument("--path " + c.path + ": this build has no NVSHMEM IBGDA adapter "
                          "(non_abi/device/pt-to-pt/ibgda_device.cuh, wheel nvidia-nvshmem-cu13, "
                          "not found at configure time; scripts/peer_headers.sh, reconfigure)");
  }
#endif
  return c;
}

// What the runs at one QP count measured: per-QP quiet, all-QP quiet, signal round trip.
struct ScopePoint {
  uint32_t qps;
  std::vector<Metric> metrics;
  bool valid = true;
};

// run: every QP count's runs, a progress line each.
std::vector<ScopePoint> measure_completion_scope(const ScopeConfig& c) {
  std::vector<ScopePoint> points;
  Progress progress("gpu-completion-scope", c.qps.size());
  for (uint32_t qps : c.qps) {
    ScopePoint p{qps, {{"put+completion", "us", {}}, {"put+completion", "us", {}}, {"round trip", "us", {}}}};
    for (uint32_t run = 0; run < c.runs; ++run) measure(c, qps, p.metrics, p.valid);
    points.push_back(std::move(p));
    progress.done(std::to_string(qps) + " QPs");
  }
  return points;
}

// assemble: a row per QP count and measurement, the all-QP rows with the fitted growth per QP.
std::vector<Result> assemble_completion_scope(const ScopeConfig& c, const std::vector<ScopePoint>& points) {
  const char* names[3] = {"per-QP quiet", "all-QP quiet", "signal round trip"};
  std::vector<Result> out;
  std::vector<double> x, all_p50;
  for (const ScopePoint& point : points) {
    const uint32_t qps = point.qps;
    const std::vector<Metric>& metrics = point.metrics;
    const bool valid = point.valid;
    for (uint32_t m = 0; m < 3; ++m) {
      if (m == 2 && c.path != "mini-gda") continue;  // the flat control is mini-gda's run
      Result r;
      r.experiment = "gpu-completion-scope";
      r.label = std::string(names[m]) + ", " + std::to_string(qps) + " QPs" +
                (c.shared_cq ? ", shared CQ" : "");
      r.engine = "gpu-kernel";
      r.placement = "gpu";
      r.submitter = "gpu-thread";
      r.pe_layout = "1 NIC, loopback QPs, 1 GPU";
      r.knobs = {{"scope", names[m]}, {"qps", std::to_string(qps)}, {"ordering", Policy::key},
                 {"iterations", std::to_string(c.iterations)}, {"warmup", std::to_string(c.warmup)},
                 {"engine_warps", std::to_string(c.nic.engine_ctas) + " CTAs x " +
                                      std::to_string(c.nic.engine_warps_per_cta) + " warps"},
                 {"nic_profile", softnic::profile_name(softnic::timing_profile(c.nic.nic_profile))},
                 {"send_cq", c.shared_cq ? "shared" : "own"}};
      if (!c.library.empty()) {
        r.label = c.path + ", " + r.label;
        r.knobs.push_back({"path", c.path});
        r.knobs.push_back({"library", c.library});
        r.knobs.push_back({"library_version", c.library_version});
      }
      r.metrics = {metrics[m]};
      r.payload_validated = valid && !metrics[m].runs.empty();
      if (m == 1 && !metrics[m].runs.empty()) x.push_back(qps), all_p50.push_back(metrics[m].p50());
      out.push_back(std::move(r));
    }
  }
  char growth[32];
  std::snprintf(growth, sizeof growth, "%.4f", x.size() > 1 ? slope(x, all_p50) : 0.0);
  for (Result& r : out) {
    if (r.knobs[0].second == names[1]) r.knobs.push_back({"all_qp_growth_us_per_qp", growth});
  }
  return out;
}

int run_gpu_completion_scope(const Arguments& a, Report& report) {
  const ScopeConfig c = parse_completion_scope(a);
  if (skip_without_cuda_device()) return 0;
  return add_results(report, assemble_completion_scope(c, measure_completion_scope(c)));
}

const bool registered = register_experiment(
    {"gpu-completion-scope",
     "Figure 4: put+completion with a per-QP vs an all-QP quiet, and a signal round trip, against "
     "QP count; --path mini-gda|nvshmem-ibgda (NVSHMEM's own quiets, no round trip)",
     run_gpu_completion_scope, true});

}  // namespace
}  // namespace dissect::bench
