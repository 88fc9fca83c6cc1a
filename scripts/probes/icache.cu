// Does a block of straight-line code run slower when a warp comes back to it after idling?
// One warp runs BLOCK (a long chain of dependent integer ops, unrolled: ~N instructions of unique
// code) `reps` times, with nothing, __nanosleep(sleep_ns), or a spin on a global word between.
#include <cstdio>
#include <cstdint>
template <int N>
__device__ __forceinline__ uint32_t chain(uint32_t x) {
#pragma unroll
  for (int i = 0; i < N; ++i) x = (x * 2654435761u + (uint32_t)i) ^ (x >> 13);
  return x;
}
template <int N>
__global__ void k(uint32_t reps, uint32_t mode, uint32_t sleep_ns, volatile uint32_t* spin,
                  unsigned long long* cycles, uint32_t* sink) {
  uint32_t x = threadIdx.x;
  unsigned long long total = 0;
  for (uint32_t r = 0; r < reps; ++r) {
    if (mode == 1) __nanosleep(sleep_ns);
    if (mode == 2) { long long t0 = clock64(); while (clock64() - t0 < sleep_ns * 2) { if (*spin) x++; } }
    long long a = clock64();
    x = chain<N>(x);
    long long b = clock64();
    if (r > 0) total += (unsigned long long)(b - a);
  }
  cycles[0] = total / (reps - 1);
  sink[threadIdx.x] = x;
}
template <int N>
void run(const char* name) {
  unsigned long long* c; uint32_t* s; uint32_t* spin;
  cudaMalloc(&c, 8); cudaMalloc(&s, 4 * 32); cudaMalloc(&spin, 4); cudaMemset(spin, 0, 4);
  for (uint32_t mode = 0; mode < 3; ++mode) {
    for (uint32_t sleep : {1000u, 5000u}) {
      if (mode == 0 && sleep != 1000u) continue;
      k<N><<<1, 32>>>(50, mode, sleep, spin, c, s);
      unsigned long long h = 0; cudaMemcpy(&h, c, 8, cudaMemcpyDeviceToHost);
      printf("%s N=%d mode=%s sleep=%u ns: %llu cycles per block (%.2f per op)\n", name, N,
             mode == 0 ? "back-to-back" : mode == 1 ? "nanosleep" : "spin", sleep, h, double(h) / N);
    }
  }
}
int main() {
  run<256>("small");
  run<2048>("medium");
  run<8192>("large");
  return 0;
}
