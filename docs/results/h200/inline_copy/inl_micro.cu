// Where the inline copy's per-16 B cost goes: one thread, cycles of
//  copy      write_inline_payload into a GPU-memory ring (no fence)
//  copy+fence  the same, then __threadfence() (what the doorbell's release waits for)
//  stores+fence  the same number of 16 B stores of constants, then the fence (no loads)
//  loads     the payload's 16 B loads, summed (no stores)
#include <cstdio>
#include "dissect/gda/wqe.h"
using namespace dissect;
constexpr int ITERS = 64;
__global__ void k(nic::QpHandle qp, const uint8_t* src, uint32_t length, int variant, unsigned long long* out) {
  unsigned long long total = 0, sink = 0;
  uint64_t index = 0;
  const uint32_t wqebbs = (2 * 16 + 16 * mlx5::inline_ds(length) + 63) / 64;
  for (int i = 0; i < ITERS + 8; ++i) {
    const uint8_t* s = src + 256 * (i % 16);
    const long long t0 = clock64();
    if (variant == 0 || variant == 1) gda::write_inline_payload(qp, index, s, length);
    if (variant == 2) {
      for (uint32_t c = 0; c < mlx5::inline_ds(length); ++c)
        *reinterpret_cast<int4*>(qp.sq.segment(index, 2 + c)) = make_int4(i, c, 1, 2);
    }
    if (variant == 3) {
      uint4 acc = make_uint4(0, 0, 0, 0);
      for (uint32_t b = 0; b < (length + 15) / 16; ++b) { uint4 v = reinterpret_cast<const uint4*>(s)[b]; acc.x ^= v.x; acc.y ^= v.y; }
      sink += acc.x + acc.y;
    }
    if (variant == 1 || variant == 2) __threadfence();
    const long long t1 = clock64();
    if (i >= 8) total += t1 - t0;
    index += wqebbs;
  }
  out[0] = total / ITERS; out[1] = sink;
}
int main() {
  uint8_t *ring, *src; unsigned long long* out;
  cudaMalloc(&ring, 4096 * 64); cudaMalloc(&src, 256 * 16); cudaMallocManaged(&out, 16);
  cudaMemset(src, 0x11, 256 * 16);
  nic::QpHandle qp{}; qp.sq.buffer = ring; qp.sq.wqebb_count = 4096; qp.max_inline = 256;
  const char* names[] = {"copy", "copy+fence", "stores+fence", "loads"};
  const uint32_t sizes[] = {8, 16, 32, 64, 96, 128, 160, 192, 220};
  int clk; cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0);
  printf("variant       "); for (uint32_t s : sizes) printf("%7u", s); printf("   (cycles; slope cycles/16B)\n");
  for (int v = 0; v < 4; ++v) {
    printf("%-13s ", names[v]);
    unsigned long long first = 0, last = 0;
    for (uint32_t s : sizes) { k<<<1, 1>>>(qp, src, s, v, out); cudaDeviceSynchronize(); printf("%7llu", out[0]); if (s == 8) first = out[0]; last = out[0]; }
    printf("   %.1f\n", double(last - first) / ((220 - 8) / 16.0));
  }
  printf("sm clock attr %d kHz; %s\n", clk, cudaGetErrorString(cudaGetLastError()));
}
