// What every GPU experiment shares of its results: whether to keep each sample (--raw), a metric's
// median over runs.
#include <algorithm>
#include <atomic>

#include "dissect/bench/gpu_experiments.h"
#include "measurement.h"

namespace dissect::bench {
namespace {
std::atomic<bool> keep_samples{false};
}  // namespace

void set_keep_gpu_samples(bool keep) { keep_samples = keep; }
bool keep_gpu_samples() { return keep_samples; }

double gpu::summary_p50(const TimedMetric& m) {
  if (m.p50_ns.empty()) return 0;
  std::vector<double> v = m.p50_ns;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace dissect::bench
