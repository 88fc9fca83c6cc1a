// Figure 3a (paper §4.1): issue and put+completion of one inline put, payload 8..220 B, copied
// into the WQE from a buffer (every size the same way, so the slope is the copy's).
#include "harness.cuh"

namespace dissect::bench {
namespace gpu {
template <typename Policy>
void sweep_with(const GpuExperimentConfig& config, std::vector<GpuExperimentResult>& out) {
  for (uint32_t bytes : {8u, 16u, 32u, 44u, 48u, 64u, 96u, 108u, 128u, 160u, 172u, 192u, 220u}) {
    GpuExperimentResult r =
        base_result(config, "inline-sweep", std::to_string(bytes) + "B", Policy::key, bytes, true);
    measure_put_latency<Policy, Payload::inline_buffer>(config, bytes, r);
    out.push_back(std::move(r));
  }
}
}  // namespace gpu

std::vector<GpuExperimentResult> run_inline_sweep(const GpuExperimentConfig& config) {
  std::vector<GpuExperimentResult> out;
  if (gpu::engine_needs_system_scope(config)) {
    gpu::sweep_with<gda::ordering::system_release_store>(config, out);
  } else {
    gpu::sweep_with<gda::ordering::gpu_fence>(config, out);
  }
  return out;
}

}  // namespace dissect::bench
