// Physical floors on this GPU: __nanosleep's real duration, an L2 round trip, a two-SM handoff.
#include <cstdio>
#include <cstdint>
__device__ __forceinline__ uint64_t gt() { uint64_t t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
__device__ __forceinline__ uint32_t ld_acq(const uint32_t* p) { uint32_t v; asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ uint32_t ld_rlx(const uint32_t* p) { uint32_t v; asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ void st_rel(uint32_t* p, uint32_t v) { asm volatile("st.release.gpu.global.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory"); }
__device__ __forceinline__ void st_rlx(uint32_t* p, uint32_t v) { asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory"); }

__global__ void sleep_k(uint64_t* out) {
  const uint32_t ns[4] = {0, 32, 64, 256};
  for (int k = 0; k < 4; ++k) {
    uint64_t t0 = gt(); long long c0 = clock64();
    for (int i = 0; i < 1000; ++i) __nanosleep(ns[k]);
    out[2 * k] = (gt() - t0); out[2 * k + 1] = clock64() - c0;
  }
}
// Dependent chain of loads through a ring of indices (stride 4 KiB, so every hop is another line).
__global__ void chase_k(const uint32_t* ring, int hops, int mode, uint64_t* out) {
  uint32_t i = 0; uint64_t t0 = gt(); long long c0 = clock64();
  for (int h = 0; h < hops; ++h) i = mode == 0 ? ld_rlx(ring + i) : ld_acq(ring + i);
  out[0] = gt() - t0; out[1] = clock64() - c0; out[2] = i;
}
// Ping-pong between block 0 and block 1 (different SMs): each side waits for its turn, then hands
// the turn over with a release store (mode 0) or a relaxed store after a fence (mode 1).
__global__ void pingpong_k(uint32_t* flag, int rounds, int mode, uint64_t* out) {
  const uint32_t me = blockIdx.x;
  if (threadIdx.x != 0) return;
  uint64_t t0 = gt(); long long c0 = clock64();
  for (int r = 0; r < rounds; ++r) {
    const uint32_t want = 2 * r + me;
    while (ld_acq(flag) != want) {}
    if (mode == 0) st_rel(flag, want + 1); else { __threadfence(); st_rlx(flag, want + 1); }
  }
  if (me == 0) { out[0] = gt() - t0; out[1] = clock64() - c0; }
}
int main() {
  uint64_t* out; cudaMallocManaged(&out, 64 * sizeof(uint64_t));
  sleep_k<<<1, 32>>>(out); cudaDeviceSynchronize();
  const uint32_t ns[4] = {0, 32, 64, 256};
  for (int k = 0; k < 4; ++k) printf("nanosleep(%u): %.1f ns, %.0f cycles per call\n", ns[k], out[2 * k] / 1000.0, out[2 * k + 1] / 1000.0);
  const int n = 1 << 16; uint32_t* ring; cudaMalloc(&ring, n * 1024 * sizeof(uint32_t));
  uint32_t* h = new uint32_t[n * 1024]();
  for (int i = 0; i < n; ++i) h[i * 1024] = ((i * 7919 + 1) % n) * 1024;
  cudaMemcpy(ring, h, n * 1024 * sizeof(uint32_t), cudaMemcpyHostToDevice);
  for (int mode = 0; mode < 2; ++mode) {
    chase_k<<<1, 1>>>(ring, 64, mode, out); cudaDeviceSynchronize();  // warm
    chase_k<<<1, 1>>>(ring, 4096, mode, out); cudaDeviceSynchronize();
    printf("chase %s: %.1f ns, %.0f cycles a hop\n", mode ? "ld.acquire.gpu" : "ld.relaxed.gpu", out[0] / 4096.0, out[1] / 4096.0);
  }
  uint32_t* flag; cudaMalloc(&flag, 4);
  for (int mode = 0; mode < 2; ++mode) {
    cudaMemset(flag, 0, 4);
    pingpong_k<<<2, 32>>>(flag, 10000, mode, out); cudaDeviceSynchronize();
    printf("ping-pong (%s): %.1f ns, %.0f cycles a one-way handoff\n", mode ? "fence + relaxed store" : "st.release", out[0] / 20000.0, out[1] / 20000.0);
  }
  return 0;
}
