// Table 4 (paper §4.1): issue and put+completion of one 8 B inline put (payload from a register,
// counters in registers: the minimal path) under every ordering policy
// of gda/ordering.h, in the table's row order, the unsafe control included. A policy whose scope
// does not cover the engine (GPU scope with a host-thread engine or host-resident queues) may let
// the engine read a stale WQE: that shows as an error CQE in the result's note, not a crash.
#include "harness.cuh"

namespace dissect::bench {

namespace {
struct MeasurePolicy {
  const GpuExperimentConfig& config;
  std::vector<GpuExperimentResult>& out;
  template <typename Policy>
  void operator()() {
    GpuExperimentResult r = gpu::base_result(config, "ordering", Policy::key, Policy::key, 8, true);
    gpu::measure_put_latency<Policy, gpu::Payload::inline_value>(config, 8, r);
    r.note = std::string(Policy::name) + (r.note.empty() ? "" : "; " + r.note);
    out.push_back(std::move(r));
  }
};
}  // namespace

// How many policies for_each_policy visits: the progress total.
struct CountPolicies {
  size_t count = 0;
  template <typename Policy>
  void operator()() {
    ++count;
  }
};

std::vector<GpuExperimentResult> run_ordering(const GpuExperimentConfig& config) {
  CountPolicies policies;
  gda::ordering::for_each_policy(policies);
  config.progress.plan(policies.count * config.runs);
  std::vector<GpuExperimentResult> out;
  gda::ordering::for_each_policy(MeasurePolicy{config, out});
  return out;
}

}  // namespace dissect::bench
