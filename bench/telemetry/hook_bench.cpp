// Per-WQE cost of the telemetry hooks: one post, one doorbell, one poll and one completion, the
// sequence a transport runs per WQE. "null" is a QP without a slot (telemetry off or untracked);
// the others are enabled at latency sample interval N. Compare within this one binary only: two
// builds differing in code layout differ by more than the effect (the RCCL page's advice).
#include <benchmark/benchmark.h>

#include "dissect/nic/qp_counters.h"

namespace dissect::telemetry {
namespace {

void per_wqe_hooks(benchmark::State& state, QpCounters* qp) {
  const PostInfo post{4096, mlx5::MLX5_OPCODE_RDMA_WRITE, 64};
  for (auto _ : state) {
    uint64_t stamp = on_post(qp, post) ? clock_ns() : kNotSampled;
    on_doorbell(qp, 1);
    on_cq_poll(qp);
    on_completion_stamped(qp, stamp);
    benchmark::DoNotOptimize(stamp);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_hooks_null_slot(benchmark::State& state) {
  QpCounters* none = nullptr;
  benchmark::DoNotOptimize(none);
  per_wqe_hooks(state, none);
}

void BM_hooks_enabled(benchmark::State& state) {
  QpCounters qp;
  initialise_counters(qp, 1, HistogramShape{5, 30000, static_cast<uint64_t>(state.range(0))});
  per_wqe_hooks(state, &qp);
}

void BM_post_only_enabled(benchmark::State& state) {
  QpCounters qp;
  initialise_counters(qp, 1, HistogramShape{5, 30000, static_cast<uint64_t>(state.range(0))});
  const PostInfo post{4096, mlx5::MLX5_OPCODE_RDMA_WRITE, 64};
  for (auto _ : state) benchmark::DoNotOptimize(on_post(&qp, post));
}

void BM_latency_bucket(benchmark::State& state) {
  QpCounters qp;
  initialise_counters(qp, 1, HistogramShape{16, 30000, 1});
  uint64_t latency = 12345;
  for (auto _ : state) {
    benchmark::DoNotOptimize(latency_bucket(qp, latency));
    latency += 7919;
  }
}

BENCHMARK(BM_hooks_null_slot);
BENCHMARK(BM_hooks_enabled)->Arg(1)->Arg(4)->Arg(16)->Arg(64);
BENCHMARK(BM_post_only_enabled)->Arg(1)->Arg(64);
BENCHMARK(BM_latency_bucket);

}  // namespace
}  // namespace dissect::telemetry

BENCHMARK_MAIN();
