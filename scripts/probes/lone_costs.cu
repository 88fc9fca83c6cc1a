// What the steps of a held lone WQE's release cost one lane, alone on the GPU: a %globaltimer
// read, a release store behind an 8 B payload store (the CQE's publication), the same behind the
// stamp's three stores, an acquire load against a relaxed one, a fence with nothing outstanding.
// Each in cycles per step (clock64), 1,000 steps, lines warm in L2. Also: %globaltimer's smallest
// step seen. Build and run on the GPU machine:
//   nvcc -O2 -arch=sm_90 -o /tmp/lone_costs scripts/probes/lone_costs.cu && /tmp/lone_costs
#include <cstdint>
#include <cstdio>

constexpr int STEPS = 1000;

__device__ inline uint64_t globaltimer() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void probe(uint64_t* buffer, long long* out, uint64_t* timer_step) {
  uint64_t* payload = buffer;        // its own 128 B line
  uint64_t* cqe = buffer + 16;       // another line
  uint32_t* flag = reinterpret_cast<uint32_t*>(buffer + 32);
  for (int i = 0; i < 64; ++i) payload[16 * i] = i;  // warm the lines
  __threadfence();

  long long t0 = clock64();
  uint64_t sum = 0;
  for (int i = 0; i < STEPS; ++i) sum += globaltimer();
  out[0] = clock64() - t0;

  uint64_t smallest = ~0ull, last = globaltimer();
  for (int i = 0; i < 100000 && smallest > 1; ++i) {
    const uint64_t now = globaltimer();
    if (now != last && now - last < smallest) smallest = now - last;
    last = now;
  }
  *timer_step = smallest;

  t0 = clock64();
  for (int i = 0; i < STEPS; ++i) {
    payload[0] = i;
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flag), "r"(i) : "memory");
  }
  out[1] = clock64() - t0;

  t0 = clock64();
  for (int i = 0; i < STEPS; ++i) {
    payload[0] = i;
    cqe[0] = i;
    cqe[1] = i + 1;
    cqe[2] = i + 2;
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flag), "r"(i) : "memory");
  }
  out[2] = clock64() - t0;

  t0 = clock64();
  uint64_t v = 0;
  for (int i = 0; i < STEPS; ++i) {
    uint64_t x;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(x) : "l"(payload + (v & 1)) : "memory");
    v += x;
  }
  out[3] = clock64() - t0;

  t0 = clock64();
  for (int i = 0; i < STEPS; ++i) {
    uint64_t x;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(x) : "l"(payload + (v & 1)) : "memory");
    v += x;
  }
  out[4] = clock64() - t0;

  t0 = clock64();
  for (int i = 0; i < STEPS; ++i) asm volatile("fence.acq_rel.gpu;" ::: "memory");
  out[5] = clock64() - t0;

  t0 = clock64();
  for (int i = 0; i < STEPS; ++i) {
    payload[0] = i;
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
    asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(flag), "r"(i) : "memory");
  }
  out[6] = clock64() - t0;
  out[7] = static_cast<long long>(sum + v);
}

int main() {
  uint64_t* buffer;
  long long* out;
  uint64_t* step;
  cudaMalloc(&buffer, 1 << 16);
  cudaMallocManaged(&out, 8 * sizeof(long long));
  cudaMallocManaged(&step, sizeof(uint64_t));
  for (int run = 0; run < 3; ++run) {
    probe<<<1, 1>>>(buffer, out, step);
    if (cudaDeviceSynchronize() != cudaSuccess) {
      std::printf("probe failed\n");
      return 1;
    }
    std::printf("run %d, cycles a step: globaltimer read %.1f; payload + st.release %.1f; payload + 3 "
                "stamp stores + st.release %.1f; ld.relaxed.gpu (dependent) %.1f; ld.acquire.gpu "
                "(dependent) %.1f; fence.acq_rel.gpu alone %.1f; payload + fence + st.relaxed %.1f; "
                "globaltimer's smallest step %llu ns\n",
                run, out[0] / double(STEPS), out[1] / double(STEPS), out[2] / double(STEPS),
                out[3] / double(STEPS), out[4] / double(STEPS), out[5] / double(STEPS),
                out[6] / double(STEPS), static_cast<unsigned long long>(*step));
  }
  return 0;
}
