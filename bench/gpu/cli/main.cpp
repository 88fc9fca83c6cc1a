// dissect_gpu_experiments: runs the §4.1 single-operation experiments on this machine's GPU(s)
// with the softnic and writes JSON. (The `dissect` CLI registers the same functions.)
//
//   dissect_gpu_experiments [--out FILE] [--engine gpu-kernel|host-thread] [--placement gpu|host]
//                           [--layout one-gpu|two-gpus] [--runs N] [--iterations N] [--warmup N]
//                           [--only floor|latency|ordering|inline-sweep|proxy-latency|telemetry-rate]
// Exits 77 with "no CUDA device: skipped" when there is no GPU.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>

#include "dissect/bench/gpu_experiments.h"
#include "dissect/softnic/gpu_engine.h"
#include "../proxy_latency.h"
#include "../telemetry_rate.h"

using namespace dissect::bench;

int main(int argc, char** argv) {
  GpuExperimentConfig config;
  std::string out_path, only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) { std::fprintf(stderr, "%s needs a value\n", a.c_str()); std::exit(2); }
      return argv[++i];
    };
    if (a == "--out") out_path = next();
    else if (a == "--engine") config.engine = next();
    else if (a == "--placement") config.placement = next();
    else if (a == "--layout") config.pe_layout = next();
    else if (a == "--runs") config.runs = std::stoul(next());
    else if (a == "--iterations") config.iterations = std::stoul(next());
    else if (a == "--warmup") config.warmup = std::stoul(next());
    else if (a == "--only") only = next();
    else { std::fprintf(stderr, "unknown argument %s\n", a.c_str()); return 2; }
  }
  if (config.warmup < 100) { std::fprintf(stderr, "--warmup must be >= 100\n"); return 2; }
  const int devices = dissect::softnic::gpu_runtime_init();
  if (devices == 0) { std::fprintf(stderr, "no CUDA device: skipped\n"); return 77; }
  if (config.pe_layout == "two-gpus" && devices < 2) {
    std::fprintf(stderr, "two-gpus layout needs 2 devices (found %d): skipped\n", devices);
    return 77;
  }
  std::vector<GpuExperimentResult> results;
  try {
    if (only.empty()) results = run_all_gpu_experiments(config);
    else if (only == "floor") results = run_mechanism_floor(config);
    else if (only == "latency") results = run_single_operation(config);
    else if (only == "ordering") results = run_ordering(config);
    else if (only == "inline-sweep") results = run_inline_sweep(config);
    else if (only == "proxy-latency") results = run_gpu_proxy_latency(config);
    else if (only == "telemetry-rate") results = run_gpu_telemetry_rate(config);
    else { std::fprintf(stderr, "unknown --only %s\n", only.c_str()); return 2; }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dissect_gpu_experiments: %s\n", e.what());
    return 1;
  }
  std::printf("# provider=softnic engine=%s placement=%s layout=%s (softnic model, not a ConnectX)\n",
              config.engine.c_str(), config.placement.c_str(), config.pe_layout.c_str());
  for (const auto& r : results) {
    std::printf("%-16s %-16s %-15s %4uB sm=%6.0fMHz gt_step=%5.0fns valid=%d |", r.name.c_str(),
                r.variant.c_str(), r.ordering.c_str(), r.payload_bytes, r.sm_clock_mhz,
                r.globaltimer_step_ns, r.payload_validated ? 1 : 0);
    for (const auto& m : r.metrics) {
      double lo = 1e300, hi = 0;
      for (double v : m.p50_ns) { lo = std::min(lo, v); hi = std::max(hi, v); }
      std::printf(" %s p50 %.0f ns [%.0f..%.0f]", m.name.c_str(), summary_p50(m),
                  m.p50_ns.empty() ? 0 : lo, hi);
    }
    if (!r.note.empty()) std::printf("  (%s)", r.note.c_str());
    std::printf("\n");
  }
  if (!out_path.empty()) {
    std::ofstream f(out_path);
    write_gpu_results_json(f, results);
  } else {
    write_gpu_results_json(std::cout, results);
  }
  return 0;
}
