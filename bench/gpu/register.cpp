// The GPU experiments as `dissect` subcommands (bench/experiment.h): gpu-latency, gpu-ordering,
// gpu-inline-sweep, gpu-floor. Flags: --engine gpu-kernel|host-thread, --placement gpu|host,
// --layout one-gpu|two-gpus, --device N, --runs N, --iterations N, --warmup N (>= 100), --quick;
// --raw keeps every sample and --progress prints a line per run (`dissect <name> --help`).
// Without a CUDA device each prints "no CUDA device: skipped" and returns 0, so `dissect report`
// still runs on a CPU-only machine.
#include <cstdio>
#include <algorithm>
#include <string>
#include <vector>

#include "dissect/common/error.h"

#include "dissect/bench/experiment.h"
#include "dissect/bench/flag_help.h"
#include "dissect/bench/gpu_experiments.h"
#include "dissect/bench/progress.h"
#include "dissect/softnic/gpu_engine.h"
#include "nic_ceiling.h"
#include "peer_latency.h"
#include "proxy_latency.h"
#include "telemetry_rate.h"
#include "to_report.h"

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
             {"nic_profile", softnic::profile_name(softnic::timing_profile(c.nic_profile))}};
  // The engine kernel's size only where one ran: a host-thread engine (gpu-proxy-latency's, or
  // --engine host-thread) has none, and a default shown there would be a label that lies.
  if (g.engine == "gpu-kernel") {
    r.knobs.push_back({"engine_warps", std::to_string(c.engine_ctas) + " CTAs x " +
                                           std::to_string(c.engine_warps_per_cta) + " warps"});
  }
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
    out.runs = run_summaries(m, c.iterations, scale);
    r.metrics.push_back(out);
    if (!m.p50_cycles.empty()) r.metrics.push_back(cycles_metric(m, c));
  }
  r.payload_validated = g.payload_validated;
  char clock[32], step[32];
  std::snprintf(clock, sizeof clock, "%.0f", g.sm_clock_mhz);
  std::snprintf(step, sizeof step, "%.0f", g.globaltimer_step_ns);
  r.environment = {{"sm_clock_mhz", clock}, {"globaltimer_step_ns", step},
                   {"timing", "in-kernel clock64, converted with the effective SM clock"}};
  // The device it ran on, before note_machine adds the machine's list under the same key.
  if (const std::string gpu = gpu_device_name(c.device); !gpu.empty()) r.environment.emplace_back("gpu", gpu);
  return r;
}

// --raw where an experiment times each operation: the harness keeps every run's samples. One
// that times only whole runs (gpu-telemetry-rate: one rate per run) has none, says so in --help
// and refuses the flag by name rather than accept it and write nothing.
void read_raw(const Arguments& a, bool per_sample) {
  const std::string about =
      per_sample ? "keep every sample: each run's times in measured order go into the JSON (`raw`)"
                 : "refused: " + a.subcommand() + " times whole runs (one rate per run), it has no per-sample times";
  const bool raw = a.flag("raw", about);
  if (raw && !per_sample) {
    throw InvalidArgument("--raw: " + a.subcommand() +
                          " times whole runs (one rate per run), it has no per-sample times to keep");
  }
  set_keep_gpu_samples(raw);
}

// How one subcommand runs its runner.
struct GpuCommand {
  GpuRunner runner;
  // --path: a peer library's device code (gpu-latency); or always that path (gpu-gdaki-ablation),
  // refused as --path would be.
  bool takes_path = false;
  const char* fixed_path = nullptr;
  bool per_sample = true;  // times each operation (false: whole runs, gpu-telemetry-rate), see read_raw
  // On the harness's PE pair and its SoftNic(s): the engine, placement, layout and profile
  // flags apply. gpu-proxy-latency has its own rig (a host-engine softnic) and takes none of them.
  bool on_pe_pair = true;
};

// The PE pair's softnic: what executes the WQEs, where the queues live, on how many GPUs.
void read_pe_pair_flags(const Arguments& a, GpuExperimentConfig& c) {
  c.engine = a.choice("engine", "gpu-kernel", {"gpu-kernel", "host-thread"},
                      "what executes the WQEs: the softnic's persistent GPU kernel or a host thread");
  c.placement = a.choice("placement", c.engine == "host-thread" ? "host" : "gpu", {"gpu", "host"},
                         "where the queues and buffers live: GPU memory or mapped host memory "
                         "(default: gpu, host with --engine host-thread)");
  c.pe_layout = a.choice("layout", "one-gpu", {"one-gpu", "two-gpus"},
                         "both PEs on one GPU and one engine, or PE i on GPU i (peer access)");
  c.engine_ctas = static_cast<uint32_t>(a.integer("engine-ctas", c.engine_ctas, 1, 1024, flag_help::ENGINE_CTAS));
  c.engine_warps_per_cta = static_cast<uint32_t>(a.integer(
      "engine-warps", c.engine_warps_per_cta, 1, softnic::MAX_ENGINE_WARPS_PER_CTA, flag_help::ENGINE_WARPS));
  c.nic_profile = a.text("nic-profile", "fast", flag_help::NIC_PROFILE);
  softnic::timing_profile(c.nic_profile);  // refused here, by name, before anything runs
  // The engine kernel's size means nothing to a host-thread engine: refused rather than ignored.
  for (const char* name : {"engine-ctas", "engine-warps"}) {
    if (c.engine == "host-thread" && a.given(name)) {
      throw InvalidArgument(std::string("--") + name + " sizes the softnic's GPU engine kernel; --engine " +
                            c.engine + " has none");
    }
  }
}

// The flags every GPU subcommand takes: device, runs, iterations, warm-up.
void read_run_flags(const Arguments& a, const GpuCommand& command, GpuExperimentConfig& c) {
  const bool quick = a.flag("quick", "--iterations 300 instead of 1,000");
  c.device = static_cast<int>(a.integer("device", 0, 0, 64, flag_help::DEVICE));
  c.runs = static_cast<uint32_t>(a.integer("runs", 3, 1, 100, flag_help::RUNS));  // each on a fresh rig
  // gpu-telemetry-rate streams messages in batches: its iterations and warm-up count in 256 and 16.
  c.iterations = static_cast<uint32_t>(a.integer(
      "iterations", quick ? 300 : 1000, 10, 10'000'000,
      command.per_sample ? "timed operations per run, one GPU thread, one outstanding"
                         : "timed messages per run, in units of 256 (16 writes per doorbell)"));
  c.warmup = static_cast<uint32_t>(a.integer(
      "warmup", 200, 100, 10'000'000,
      command.per_sample ? "operations per run before the timed ones, discarded"
                         : "untimed messages per run before the timed ones, in units of 16"));
}

int run_gpu(const Arguments& a, Report& report, const GpuCommand& command) {
  a.provider({"softnic"});
  read_raw(a, command.per_sample);
  GpuExperimentConfig c;
  read_run_flags(a, command, c);
  if (command.on_pe_pair) read_pe_pair_flags(a, c);
  if (command.takes_path) {
    c.path = a.choice("path", "mini-gda", latency_paths(),
                      "whose device code posts and waits: mini-gda, or a peer library's own (src/peers)");
  }
  if (command.fixed_path) c.path = command.fixed_path;
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
  Progress progress(a.subcommand(), 0);
  bind_progress(progress, c);
  int status = 0;
  for (const GpuExperimentResult& g : command.runner(c)) {
    if (!g.payload_validated) status = 1;
    report.add(convert(g, c));
  }
  return status;
}

int run_gpu_latency(const Arguments& a, Report& r) { return run_gpu(a, r, {&run_single_operation, true}); }
int run_gpu_gdaki_ablation(const Arguments& a, Report& r) {
  return run_gpu(a, r, {&run_gdaki_ablation_experiment, false, "gdaki"});
}
int run_gpu_ordering(const Arguments& a, Report& r) { return run_gpu(a, r, {&run_ordering}); }
int run_gpu_inline_sweep(const Arguments& a, Report& r) { return run_gpu(a, r, {&run_inline_sweep}); }
int run_gpu_floor(const Arguments& a, Report& r) { return run_gpu(a, r, {&run_mechanism_floor}); }
int run_gpu_proxy(const Arguments& a, Report& r) {
  return run_gpu(a, r, {&run_gpu_proxy_latency, false, nullptr, true, false});
}
int run_gpu_telemetry(const Arguments& a, Report& r) {
  return run_gpu(a, r, {&run_gpu_telemetry_rate, false, nullptr, false});
}

std::vector<uint32_t> integer_list(const Arguments& a, const std::string& name,
                                   const std::vector<uint32_t>& fallback, uint32_t min,
                                   uint32_t max, const std::string& about) {
  const std::vector<uint64_t> wide(fallback.begin(), fallback.end());
  std::vector<uint32_t> out;
  for (uint64_t v : a.integers(name, wide, min, max, about)) out.push_back(static_cast<uint32_t>(v));
  return out;
}

int run_nic_ceiling_command(const Arguments& a, Report& report) {
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
  a.check_all_used();
  if (softnic::gpu_runtime_init() == 0) {
    std::fprintf(stderr, "no CUDA device: skipped\n");
    return 0;
  }
  Progress progress("nic-ceiling", nic_ceiling_cases(c));
  c.case_done = [&progress](const std::string& label) { progress.done(label); };
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
    {"gpu-telemetry-rate", "one GPU thread, 8 B writes, 16 per doorbell: rate and issue time with telemetry compiled out, off and at N = 1, 4, 16, 64",
     run_gpu_telemetry, true});

}  // namespace
}  // namespace dissect::bench
