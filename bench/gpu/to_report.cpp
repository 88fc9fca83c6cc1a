#include "to_report.h"

#include <cstdio>
#include <memory>
#include <string>

#include "dissect/softnic/gpu_engine.h"

namespace dissect::bench {
namespace {

// A metric timed in SM cycles, as counted (`issue cycles`): the clock-sensitive part that
// `dissect fit-clock` separates from the rest across runs at different locked clocks.
Metric cycles_metric(const gpu::TimedMetric& m, const PePairConfig& c) {
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

}  // namespace

std::vector<Summary> run_summaries(const gpu::TimedMetric& metric, uint64_t samples, double ns_per_unit) {
  std::vector<Summary> runs;
  for (size_t i = 0; i < metric.p50_ns.size(); ++i) {
    Summary s;
    s.p10 = metric.p10_ns[i] / ns_per_unit;
    s.p50 = metric.p50_ns[i] / ns_per_unit;
    s.p90 = metric.p90_ns[i] / ns_per_unit;
    s.samples = samples;
    if (i < metric.samples_ns.size()) {
      for (double ns : metric.samples_ns[i]) s.raw.push_back(ns / ns_per_unit);
    }
    runs.push_back(s);
  }
  return runs;
}

Result to_result(const gpu::Measurement& g, const PePairConfig& c) {
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
  for (const gpu::TimedMetric& m : g.metrics) {
    Metric out;
    out.name = m.name;
    // "ns per message" (gpu-telemetry-rate) stays in ns, as its name says; latencies are in us.
    const bool per_message = m.name.find("ns per message") != std::string::npos;
    out.unit = per_message ? "ns" : "us";
    const double scale = per_message ? 1 : 1e3;
    out.runs = run_summaries(m, m.samples_per_run != 0 ? m.samples_per_run : c.iterations, scale);
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

std::vector<Result> to_results(const std::vector<gpu::Measurement>& measurements,
                               const PePairConfig& config) {
  std::vector<Result> out;
  for (const gpu::Measurement& m : measurements) out.push_back(to_result(m, config));
  return out;
}

void bind_progress(Progress& progress, PePairConfig& config) {
  // Shared by the callbacks: the measurement under way, named by base_result as it starts.
  auto measuring = std::make_shared<std::string>();
  config.progress.expect = [&progress](size_t runs) { progress.expect(runs); };
  config.progress.begin = [measuring](const std::string& what) { *measuring = what; };
  config.progress.done = [&progress, measuring, runs = config.runs](uint32_t run) {
    progress.done(*measuring + ", run " + std::to_string(run + 1) + "/" + std::to_string(runs));
  };
}

}  // namespace dissect::bench
