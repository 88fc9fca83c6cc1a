// The GPU experiments as `dissect` subcommands (bench/experiment.h): gpu-latency, gpu-ordering,
// gpu-inline-sweep, gpu-floor. Flags: --engine gpu-kernel|host-thread, --placement gpu|host,
// --layout one-gpu|two-gpus, --device N, --runs N, --iterations N, --warmup N (>= 100), --quick.
// Without a CUDA device each prints "no CUDA device: skipped" and returns 0, so `dissect report`
// still runs on a CPU-only machine.
#include <cstdio>
#include <algorithm>
#include <string>
#include <vector>

#include "dissect/common/error.h"

#include "dissect/bench/experiment.h"
#include "dissect/bench/gpu_experiments.h"
#include "dissect/softnic/gpu_engine.h"
#include "nic_ceiling.h"
#include "peer_latency.h"
#include "proxy_latency.h"
#include "telemetry_rate.h"

namespace dissect::bench {
namespace {

using GpuRunner = std::vector<GpuExperimentResult> (*)(const GpuExperimentConfig&);

// A metric timed in SM cycles, as counted (`issue cycles`): the clock-sensitive part that
// `dissect fit-clock` separates from the rest across runs at different locked clocks.
Metric cycles_metric(const GpuMetric& m, const GpuExperimentConfig& c) {
  Metric out;
  out.name = m.name + " cycles";
  out.unit = "cycles";
  for (size_t i = 0; i < m.p50_cycles.size(); ++i) {
    Summary s;
    s.p10 = m.p10_cycles[i];
    s.p50 = m.p50_cycles[i];
    s.p90 = m.p90_cycles[i];
    s.samples = c.iterations;
    out.runs.push_back(s);
  }
  return out;
}

Result convert(const GpuExperimentResult& g, const GpuExperimentConfig& c) {
  Result r;
  r.experiment = "gpu-" + g.name;
  r.label = g.variant;
  r.provider = g.provider;
  r.engine = g.engine;
  r.placement = g.placement;
  r.submitter = "gpu-thread";
  r.pe_layout = g.pe_layout == "two-gpus" ? "2 PEs, 1 process, 2 GPUs" : "2 PEs, 1 process, 1 GPU";
  if (g.name == "proxy-latency") r.pe_layout = "1 process, 1 GPU, host workers, loopback QP per worker";
  r.knobs = {{"ordering", g.ordering},
             {"payload_bytes", std::to_string(g.payload_bytes)},
             {"inline", g.inline_payload ? "yes" : "no"},
             {"iterations", std::to_string(c.iterations)},
             {"warmup", std::to_string(c.warmup)},
             {"engine_warps", std::to_string(c.engine_ctas) + " CTAs x " +
                                  std::to_string(c.engine_warps_per_cta) + " warps"},
             {"nic_profile", softnic::profile_name(softnic::timing_profile(c.nic_profile))}};
  if (!g.library.empty()) {
    r.knobs.push_back({"path", c.path});
    r.knobs.push_back({"library", g.library});
    r.knobs.push_back({"library_version", g.library_version});
  }
  if (!g.note.empty()) r.knobs.push_back({"note", g.note});
  for (const GpuMetric& m : g.metrics) {
    Metric out;
    out.name = m.name;
    // "ns per message" (gpu-telemetry-rate) stays in ns, as its name says; latencies are in us.
    const bool per_message = m.name.find("ns per message") != std::string::npos;
    out.unit = per_message ? "ns" : "us";
    const double scale = per_message ? 1 : 1e3;
    for (size_t i = 0; i < m.p50_ns.size(); ++i) {
      Summary s;
      s.p10 = m.p10_ns[i] / scale;
      s.p50 = m.p50_ns[i] / scale;
      s.p90 = m.p90_ns[i] / scale;
      s.samples = c.iterations;
      out.runs.push_back(s);
    }
    r.metrics.push_back(out);
    if (!m.p50_cycles.empty()) r.metrics.push_back(cycles_metric(m, c));
  }
  r.payload_validated = g.payload_validated;
  char clock[32], step[32];
  std::snprintf(clock, sizeof clock, "%.0f", g.sm_clock_mhz);
  std::snprintf(step, sizeof step, "%.0f", g.globaltimer_step_ns);
  r.environment = {{"sm_clock_mhz", clock}, {"globaltimer_step_ns", step},
                   {"timing", "in-kernel clock64, converted with the effective SM clock"}};
  return r;
}

// The GPU runners return every result at the end, with per-run percentiles, no samples: refuse
// the flags they cannot honour rather than accept them and do nothing.
void refuse_sample_flags(const Arguments& a, bool samples_kept) {
  if (a.flag("raw") && !samples_kept) {
    throw InvalidArgument("--raw: " + a.subcommand() +
                          " keeps per-run percentiles on the GPU, not per-sample times");
  }
  if (a.flag("progress")) {
    throw InvalidArgument("--progress: " + a.subcommand() +
                          " reports its cases when it ends (no per-case progress on the GPU yet)");
  }
}

// `takes_path`: the experiment runs through a peer library's device code on --path (gpu-latency);
// `fixed_path`: it always does, on that path (gpu-gdaki-ablation), and is refused as --path would be.
int run_gpu(const Arguments& a, Report& report, GpuRunner runner, bool takes_path = false,
            const char* fixed_path = nullptr) {
  a.provider({"softnic"});
  refuse_sample_flags(a, false);
  GpuExperimentConfig c;
  const bool quick = a.flag("quick");
  c.engine = a.choice("engine", "gpu-kernel", {"gpu-kernel", "host-thread"});
  c.placement = a.choice("placement", c.engine == "host-thread" ? "host" : "gpu", {"gpu", "host"});
  c.pe_layout = a.choice("layout", "one-gpu", {"one-gpu", "two-gpus"});
  c.device = static_cast<int>(a.integer("device", 0, 0, 64));
  c.runs = static_cast<uint32_t>(a.integer("runs", 3, 1, 100));
  c.iterations = static_cast<uint32_t>(a.integer("iterations", quick ? 300 : 1000, 10, 10'000'000));
  c.warmup = static_cast<uint32_t>(a.integer("warmup", 200, 100, 10'000'000));
  c.engine_ctas = static_cast<uint32_t>(a.integer("engine-ctas", c.engine_ctas, 1, 1024));
  c.engine_warps_per_cta =
      static_cast<uint32_t>(a.integer("engine-warps", c.engine_warps_per_cta, 1, softnic::MAX_ENGINE_WARPS_PER_CTA));
  c.nic_profile = a.text("nic-profile", "fast");
  softnic::timing_profile(c.nic_profile);  // refused here, by name, before anything runs
  if (takes_path) c.path = a.choice("path", "mini-gda", latency_paths());
  if (fixed_path) c.path = fixed_path;
  a.check_all_used();
  check_latency_path(c);  // an adapter not built, or a configuration it cannot run: by name
  const int devices = softnic::gpu_runtime_init();
  if (devices == 0) {
    std::fprintf(stderr, "no CUDA device: skipped\n");
    return 0;
  }
  if (c.pe_layout == "two-gpus" && devices < c.device + 2) {
    std::fprintf(stderr, "two-gpus layout needs 2 CUDA devices: skipped\n");
    return 0;
  }
  int status = 0;
  for (const GpuExperimentResult& g : runner(c)) {
    if (!g.payload_validated) status = 1;
    report.add(convert(g, c));
  }
  return status;
}

int run_gpu_latency(const Arguments& a, Report& r) { return run_gpu(a, r, &run_single_operation, true); }
int run_gpu_gdaki_ablation(const Arguments& a, Report& r) {
  return run_gpu(a, r, &run_gdaki_ablation_experiment, false, "gdaki");
}
int run_gpu_ordering(const Arguments& a, Report& r) { return run_gpu(a, r, &run_ordering); }
int run_gpu_inline_sweep(const Arguments& a, Report& r) { return run_gpu(a, r, &run_inline_sweep); }
int run_gpu_floor(const Arguments& a, Report& r) { return run_gpu(a, r, &run_mechanism_floor); }
int run_gpu_proxy(const Arguments& a, Report& r) { return run_gpu(a, r, &run_gpu_proxy_latency); }
int run_gpu_telemetry(const Arguments& a, Report& r) { return run_gpu(a, r, &run_gpu_telemetry_rate); }

std::vector<uint32_t> integer_list(const Arguments& a, const std::string& name,
                                   const std::vector<uint32_t>& fallback, uint32_t min,
                                   uint32_t max) {
  const std::vector<uint64_t> wide(fallback.begin(), fallback.end());
  std::vector<uint32_t> out;
  for (uint64_t v : a.integers(name, wide, min, max)) out.push_back(static_cast<uint32_t>(v));
  return out;
}

int run_nic_ceiling_command(const Arguments& a, Report& report) {
  a.provider({"softnic"});
  refuse_sample_flags(a, true);  // its latency samples go through summarize(): --raw keeps them
  NicCeilingConfig c;
  const bool quick = a.flag("quick");
  c.device = static_cast<int>(a.integer("device", 0, 0, 64));
  c.engine_ctas = static_cast<uint32_t>(a.integer("engine-ctas", c.engine_ctas, 1, 1024));
  c.engine_warps_per_cta =
      static_cast<uint32_t>(a.integer("engine-warps", c.engine_warps_per_cta, 1, softnic::MAX_ENGINE_WARPS_PER_CTA));
  c.qps = integer_list(a, "qps", quick ? std::vector<uint32_t>{1, 64} : c.qps, 1, 1024);
  c.sizes = integer_list(a, "sizes", quick ? std::vector<uint32_t>{8, 4096} : c.sizes, 1, 1u << 20);
  c.depth = static_cast<uint32_t>(a.power_of_two("depth", c.depth, 32768));
  c.rounds = static_cast<uint32_t>(a.integer("rounds", quick ? 4 : c.rounds, 1, 1000));
  c.nic_profile = a.text("nic-profile", "fast");
  softnic::timing_profile(c.nic_profile);  // refused here, by name, before anything runs
  c.runs = static_cast<uint32_t>(a.integer("runs", quick ? 2 : c.runs, 1, 100));
  a.check_all_used();
  if (softnic::gpu_runtime_init() == 0) {
    std::fprintf(stderr, "no CUDA device: skipped\n");
    return 0;
  }
  int status = 0;
  for (Result& r : run_nic_ceiling(c)) {
    if (!r.payload_validated) status = 1;
    report.add(std::move(r));
  }
  return status;
}

const bool registered_nic_ceiling = register_experiment(
    {"nic-ceiling", "the NIC model's own capacity: msg/s and GB/s by QP count and payload, doorbell-to-CQE latency",
     run_nic_ceiling_command, true});
const bool registered_latency = register_experiment(
    {"gpu-latency", "one GPU thread: issue, put+completion, round trip of one 8 B put (Table 3); --path mini-gda|gdaki|nvshmem-ibgda",
     run_gpu_latency, true});
const bool registered_gdaki_ablation = register_experiment(
    {"gpu-gdaki-ablation", "one GPU thread, one 8 B inline put: mini-gda to DOCA GPUNetIO's doca_gpu_dev_verbs_p, one DOCA behaviour a row (Table 3's gap)",
     run_gpu_gdaki_ablation, true});
const bool registered_ordering = register_experiment(
    {"gpu-ordering", "one GPU thread: issue and put+completion under every ordering policy (Table 4)",
     run_gpu_ordering, true});
const bool registered_sweep = register_experiment(
    {"gpu-inline-sweep", "one GPU thread: inline payload 8-220 B (Figure 3a)", run_gpu_inline_sweep,
     true});
const bool registered_floor = register_experiment(
    {"gpu-floor", "bare mechanism floor: 64 B store + one fence + 8 B doorbell store",
     run_gpu_floor, true});
const bool registered_proxy = register_experiment(
    {"gpu-proxy-latency", "one GPU thread through the proxy: baseline vs tuned handoff, 16 B store reference (Table 3)",
     run_gpu_proxy, true});
const bool registered_telemetry = register_experiment(
    {"gpu-telemetry-rate", "one GPU thread, 8 B writes, 16 per doorbell: rate with telemetry off and at N = 1, 4, 16, 64",
     run_gpu_telemetry, true});

}  // namespace
}  // namespace dissect::bench
