// Figure 3a (paper §4.1): issue and put+completion of one inline put, payload 8..220 B, copied
// into the WQE from a buffer (every size the same way, so the slope is the copy's).
#include <iterator>

#include "gpu_command.h"
#include "harness.cuh"
#include "to_report.h"

namespace dissect::bench {
namespace gpu {
constexpr uint32_t SWEEP_BYTES[] = {8, 16, 32, 44, 48, 64, 96, 108, 128, 160, 172, 192, 220};

template <typename Policy>
void sweep_with(const PePairConfig& config, std::vector<gpu::Measurement>& out) {
  config.progress.plan(std::size(SWEEP_BYTES) * config.runs);
  for (uint32_t bytes : SWEEP_BYTES) {
    gpu::Measurement r =
        base_result(config, "inline-sweep", std::to_string(bytes) + "B", Policy::key, bytes, true);
    measure_put_latency<Policy, Payload::inline_buffer>(config, bytes, r);
    out.push_back(std::move(r));
  }
}
}  // namespace gpu

namespace {

std::vector<Result> run_inline_sweep(const PePairConfig& config) {
  std::vector<gpu::Measurement> out;
  if (gpu::engine_needs_system_scope(config)) {
    gpu::sweep_with<gda::ordering::system_release_store>(config, out);
  } else {
    gpu::sweep_with<gda::ordering::gpu_fence>(config, out);
  }
  return to_results(out, config);
}

int run_gpu_inline_sweep(const Arguments& a, Report& r) { return run_gpu_experiment(a, r, {&run_inline_sweep}); }

const bool registered = register_experiment(
    {"gpu-inline-sweep", "one GPU thread: inline payload 8-220 B (Figure 3a)", run_gpu_inline_sweep,
     true});

}  // namespace

}  // namespace dissect::bench
