// The bare mechanism floor, measured in the same run as the experiments: a 64 B store (the WQE),
// one GPU-scope fence, an 8 B doorbell store, nothing else; no engine consumes it. Controls: the
// same with no fence, and with a system-scope fence. The WQE slot and the doorbell word are in the
// configuration's queue placement (GPU memory, or mapped host memory).
#include "gpu_command.h"
#include "harness.cuh"
#include "to_report.h"

namespace dissect::bench {
namespace gpu {

enum class FloorFence { none, gpu, system };

template <FloorFence F>
__global__ void floor_kernel(uint8_t* wqe_ring, uint64_t* doorbell, uint32_t warmup,
                             uint32_t iterations, SampleBuffers out) {
  const uint64_t g0 = now_ns();
  const long long c0 = clock64();
  for (uint32_t i = 0; i < warmup + iterations; ++i) {
    int4* slot = reinterpret_cast<int4*>(wqe_ring + size_t{i % 64} * 64);
    const int v = static_cast<int>(i);
    const long long ca = clock64();
    slot[0] = make_int4(v, 1, 2, 3);
    slot[1] = make_int4(v, 4, 5, 6);
    slot[2] = make_int4(v, 7, 8, 9);
    slot[3] = make_int4(v, 10, 11, 12);
    if constexpr (F == FloorFence::gpu) fence_release<Scope::gpu>();
    if constexpr (F == FloorFence::system) fence_release<Scope::system>();
    *reinterpret_cast<volatile uint64_t*>(doorbell) = (uint64_t{i} << 32) | 0x100;
    const long long cb = clock64();
    if (i >= warmup) out.a[i - warmup] = static_cast<unsigned long long>(cb - ca);
  }
  const long long c1 = clock64();
  const uint64_t g1 = now_ns();
  out.timer->cycles = static_cast<unsigned long long>(c1 - c0);
  out.timer->ns = g1 - g0;
  *out.status = 0;
}

template <FloorFence F>
gpu::Measurement measure_floor(const PePairConfig& config, const char* variant) {
  gpu::Measurement r = base_result(config, "mechanism-floor", variant, variant, 64, true);
  gpu::TimedMetric floor{"floor", {}, {}, {}};
  const RunTally tally = run_on_fresh_pairs(config, [&](PePair& pair, uint32_t, RunTally& t) {
    auto& a = pair.pe[0];
    // A scratch ring and doorbell word in the queue placement (the PE's source buffer).
    uint8_t* ring = a.src;
    auto* doorbell = reinterpret_cast<uint64_t*>(a.src + 64 * 64);
    cudaSetDevice(a.device);
    floor_kernel<F><<<1, 1, 0, a.stream>>>(ring, doorbell, config.warmup, config.iterations,
                                           pair.samples);
    check_cuda(cudaGetLastError(), "launch floor kernel");
    wait(a.stream, pair, "floor kernel");
    const HostSamples s = read_samples(pair, config.iterations);
    t.record(s.timer);
    add_run(floor, s.a.data(), config.iterations, s.timer);
    uint64_t db = 0;
    check_cuda(cudaMemcpyAsync(&db, doorbell, 8, cudaMemcpyDefault, a.stream), "doorbell");
    check_cuda(cudaStreamSynchronize(a.stream), "doorbell");
    t.valid = t.valid && db == ((uint64_t{config.warmup + config.iterations - 1} << 32) | 0x100);
  });
  r.metrics = {floor};
  r.payload_validated = tally.valid;
  r.sm_clock_mhz = tally.mean_clock_mhz();
  r.note = "64 B WQE store + fence + 8 B doorbell store, no engine";
  return r;
}

}  // namespace gpu

namespace {

std::vector<Result> run_mechanism_floor(const PePairConfig& config) {
  config.progress.plan(3 * size_t{config.runs});
  return to_results({gpu::measure_floor<gpu::FloorFence::gpu>(config, "gpu-fence"),
                     gpu::measure_floor<gpu::FloorFence::none>(config, "no-fence"),
                     gpu::measure_floor<gpu::FloorFence::system>(config, "system-fence")},
                    config);
}

int run_gpu_floor(const Arguments& a, Report& r) { return run_gpu_experiment(a, r, {&run_mechanism_floor}); }

const bool registered = register_experiment(
    {"gpu-floor", "bare mechanism floor: 64 B store + one fence + 8 B doorbell store",
     run_gpu_floor, true});

}  // namespace

}  // namespace dissect::bench
