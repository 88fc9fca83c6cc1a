// Table 4 (paper §4.1): issue and put+completion of one 8 B inline put (payload from a register,
// counters in registers: the minimal path) under every ordering policy
// of gda/ordering.h, in the table's row order, the unsafe control included. A policy whose scope
// does not cover the engine (GPU scope with a host-thread engine or host-resident queues) may let
// the engine read a stale WQE: that shows as an error CQE in the result's note, not a crash.
#include "gpu_command.h"
#include "harness.cuh"
#include "to_report.h"

namespace dissect::bench {

namespace {
struct MeasurePolicy {
  const PePairConfig& config;
  std::vector<gpu::Measurement>& out;
  template <typename Policy>
  void operator()() {
    gpu::Measurement r = gpu::base_result(config, "ordering", Policy::key, Policy::key, 8, true);
    gpu::measure_put_latency<Policy, gpu::Payload::inline_value>(config, 8, r);
    r.note = std::string(Policy::name) + (r.note.empty() ? "" : "; " + r.note);
    out.push_back(std::move(r));
  }
};

// How many policies for_each_policy visits: the progress total.
struct CountPolicies {
  size_t count = 0;
  template <typename Policy>
  void operator()() {
    ++count;
  }
};

std::vector<Result> run_ordering(const PePairConfig& config) {
  CountPolicies policies;
  gda::ordering::for_each_policy(policies);
  config.progress.plan(policies.count * config.runs);
  std::vector<gpu::Measurement> out;
  gda::ordering::for_each_policy(MeasurePolicy{config, out});
  return to_results(out, config);
}

int run_gpu_ordering(const Arguments& a, Report& r) { return run_gpu_experiment(a, r, {&run_ordering}); }

const bool registered = register_experiment(
    {"gpu-ordering", "one GPU thread: issue and put+completion under every ordering policy (Table 4)",
     run_gpu_ordering, true});

}  // namespace

}  // namespace dissect::bench
