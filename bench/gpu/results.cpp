// JSON for the GPU experiments, and run_all_gpu_experiments.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <ostream>
#include <string>

#include "dissect/bench/gpu_experiments.h"

namespace dissect::bench {
namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out + "\"";
}

std::string number(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

std::string list(const std::vector<double>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + number(v[i]);
  return out + "]";
}

}  // namespace

namespace {
std::atomic<bool> keep_samples{false};
}  // namespace

void set_keep_gpu_samples(bool keep) { keep_samples = keep; }
bool keep_gpu_samples() { return keep_samples; }

double summary_p50(const GpuMetric& m) {
  if (m.p50_ns.empty()) return 0;
  std::vector<double> v = m.p50_ns;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

namespace {
// Issue time against the GPU-fence floor of the same run (the issue's 1.5x criterion), in the note
// of every single-operation and ordering result.
void note_floor_ratio(std::vector<GpuExperimentResult>& all) {
  double floor = 0;
  for (const auto& r : all) {
    if (r.name == "mechanism-floor" && r.variant == "gpu-fence" && !r.metrics.empty()) {
      floor = summary_p50(r.metrics[0]);
    }
  }
  if (floor <= 0) return;
  for (auto& r : all) {
    if ((r.name != "latency" && r.name != "ordering") || r.metrics.empty()) continue;
    const double issue = summary_p50(r.metrics[0]);
    char line[96];
    std::snprintf(line, sizeof line, "issue %.3f us = %.2fx the GPU-fence floor of this run",
                  issue / 1000, issue / floor);
    r.note += (r.note.empty() ? "" : "; ") + std::string(line);
  }
}
}  // namespace

std::vector<GpuExperimentResult> run_all_gpu_experiments(const GpuExperimentConfig& config) {
  std::vector<GpuExperimentResult> all;
  for (auto* f : {&run_mechanism_floor, &run_single_operation, &run_ordering, &run_inline_sweep}) {
    auto part = f(config);
    all.insert(all.end(), part.begin(), part.end());
  }
  note_floor_ratio(all);
  return all;
}

void write_gpu_results_json(std::ostream& out, const std::vector<GpuExperimentResult>& results) {
  out << "[\n";
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    out << "  {\"name\": " << quoted(r.name) << ", \"variant\": " << quoted(r.variant)
        << ", \"provider\": " << quoted(r.provider) << ", \"nic\": \"softnic model (not a ConnectX)\""
        << ", \"engine\": " << quoted(r.engine) << ", \"placement\": " << quoted(r.placement)
        << ", \"pe_layout\": " << quoted(r.pe_layout) << ", \"ordering\": " << quoted(r.ordering)
        << ", \"payload_bytes\": " << r.payload_bytes
        << ", \"inline\": " << (r.inline_payload ? "true" : "false")
        << ", \"sm_clock_mhz\": " << number(r.sm_clock_mhz)
        << ", \"globaltimer_step_ns\": " << number(r.globaltimer_step_ns)
        << ", \"payload_validated\": " << (r.payload_validated ? "true" : "false")
        << ", \"note\": " << quoted(r.note) << ",\n   \"metrics\": [";
    for (size_t m = 0; m < r.metrics.size(); ++m) {
      const auto& x = r.metrics[m];
      double lo = 0, hi = 0;
      if (!x.p50_ns.empty()) {
        lo = *std::min_element(x.p50_ns.begin(), x.p50_ns.end());
        hi = *std::max_element(x.p50_ns.begin(), x.p50_ns.end());
      }
      out << (m ? ",\n     " : "\n     ") << "{\"metric\": " << quoted(x.name)
          << ", \"p50_ns\": " << number(summary_p50(x)) << ", \"p50_min_ns\": " << number(lo)
          << ", \"p50_max_ns\": " << number(hi) << ", \"runs_p50_ns\": " << list(x.p50_ns)
          << ", \"runs_p10_ns\": " << list(x.p10_ns) << ", \"runs_p90_ns\": " << list(x.p90_ns)
          << "}";
    }
    out << "]}" << (i + 1 < results.size() ? "," : "") << "\n";
  }
  out << "]\n";
}

}  // namespace dissect::bench
