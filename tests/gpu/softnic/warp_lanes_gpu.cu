// The warp's collective steps of the GPU engine's windows (engine/lanes.h) against the host lanes'
// loops, the CPU tier's reference: WarpLanes::span, the smallest range holding a window's
// destinations (express_pair.h: two windows in one pass only when their spans are apart), reduced
// in 32-bit halves.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "engine/lanes.h"
#include "gpu_cases.h"

namespace sn = dissect::softnic;
using dissect::gputest::SKIP;

namespace {

constexpr uint32_t CASES = 4096;

struct SpanCase {
  sn::ByteRange range[32];
  uint32_t count;
  sn::ByteRange span;  // the kernel's answer
};

__global__ void warp_spans(SpanCase* cases) {
  SpanCase& c = cases[blockIdx.x];
  const sn::WarpLanes lanes;
  const sn::ByteRange s = lanes.span(c.count, [&](uint32_t k) { return c.range[k]; });
  if (lanes.lane() == 0) c.span = s;
}

// Bounds that share their high word, straddle a 4 GiB line, or differ only there: the reduction's
// two halves each decide some cases.
uint64_t draw_bound(std::mt19937_64& rng) {
  switch (rng() % 3) {
    case 0: return 0x7f0000000000ull + rng() % 4096;
    case 1: return 0x7f00ffffff00ull + rng() % 512;
    default: return (rng() % 4 << 32) | (rng() & 0xffffffffull);
  }
}

int run_span() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "no CUDA device: skipped\n");
    return SKIP;
  }
  std::mt19937_64 rng(7);
  std::vector<SpanCase> host(CASES);
  for (SpanCase& c : host) {
    c.count = static_cast<uint32_t>(rng() % 33);
    for (sn::ByteRange& r : c.range) {
      const uint64_t begin = draw_bound(rng);
      const uint64_t length = rng() % 5 == 0 ? 0 : 1 + rng() % 300;  // a NOP's, a failed WRITE's: empty
      r = sn::ByteRange{begin, begin + length};
    }
  }
  SpanCase* device = nullptr;
  GT_CHECK(cudaMalloc(&device, CASES * sizeof(SpanCase)) == cudaSuccess, "cudaMalloc");
  GT_CHECK(cudaMemcpy(device, host.data(), CASES * sizeof(SpanCase), cudaMemcpyHostToDevice) == cudaSuccess, "copy in");
  warp_spans<<<CASES, 32>>>(device);
  GT_CHECK(cudaDeviceSynchronize() == cudaSuccess, "warp_spans: %s", cudaGetErrorString(cudaGetLastError()));
  std::vector<SpanCase> got(CASES);
  GT_CHECK(cudaMemcpy(got.data(), device, CASES * sizeof(SpanCase), cudaMemcpyDeviceToHost) == cudaSuccess, "copy out");
  cudaFree(device);
  const sn::HostLanes lanes;
  for (uint32_t i = 0; i < CASES; ++i) {
    const SpanCase& c = host[i];
    const sn::ByteRange want = lanes.span(c.count, [&](uint32_t k) { return c.range[k]; });
    GT_CHECK(got[i].span.begin == want.begin && got[i].span.end == want.end,
             "case %u (%u lanes): the warp's span [%llx, %llx), the host lanes' [%llx, %llx)", i, c.count,
             static_cast<unsigned long long>(got[i].span.begin), static_cast<unsigned long long>(got[i].span.end),
             static_cast<unsigned long long>(want.begin), static_cast<unsigned long long>(want.end));
  }
  std::printf("ok: %u windows' spans, the warp's reductions equal the host lanes' loop\n", CASES);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return dissect::gputest::run_cases(argc, argv, {{"span", run_span}}); }
