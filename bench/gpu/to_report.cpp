#include "to_report.h"

#include <memory>
#include <string>

namespace dissect::bench {

std::vector<Summary> run_summaries(const GpuMetric& metric, uint64_t samples, double ns_per_unit) {
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

void bind_progress(Progress& progress, GpuExperimentConfig& config) {
  // Shared by the callbacks: the measurement under way, named by base_result as it starts.
  auto measuring = std::make_shared<std::string>();
  config.progress.expect = [&progress](size_t runs) { progress.expect(runs); };
  config.progress.begin = [measuring](const std::string& what) { *measuring = what; };
  config.progress.done = [&progress, measuring, runs = config.runs](uint32_t run) {
    progress.done(*measuring + ", run " + std::to_string(run + 1) + "/" + std::to_string(runs));
  };
}

}  // namespace dissect::bench
