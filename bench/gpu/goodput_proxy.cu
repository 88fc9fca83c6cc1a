// gpu-goodput, mini-proxy: T GPU producers (one thread each, the sole producer of its ring: the
// tuned handoff's OwnedRing, one posted 16 B store per request) enqueue writes of `size` bytes
// back to back, the ring's backpressure the only flow control; T host workers chain up to B of
// them per post into the softnic host engine (proxy_cuda_rig.h). Goodput = payload bytes /
// (the last producer's last completion - the first producer's start), on %globaltimer.
//
// Payload validation: before the kernel, producer p's source region is filled with a pattern of
// (size, run, p) and its destination cleared; after it, each destination equals its source.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "dissect/bench/gpu_load_plan.h"
#include "dissect/bench/proxy_cuda_rig.h"
#include "dissect/proxy/handoff.h"
#include "goodput.h"
#include "harness.cuh"

namespace dissect::bench::gpu {
namespace {

struct ProducerTimes {
  unsigned long long start, end;
  uint32_t status;  // 0 ok, 1 enqueue, 2 completion
};

__global__ void proxy_goodput_kernel(const proxy::RingHandle* rings, uint64_t stride, uint32_t size,
                                     uint64_t messages, ProducerTimes* times) {
  const uint32_t p = blockIdx.x;
  const proxy::RingHandle ring = rings[p];
  proxy::OwnedRing owned = proxy::own(ring);
  const proxy::Request request{proxy::Operation::write, 0, size, static_cast<uint32_t>(p * stride), p * stride};
  ProducerTimes t{now_ns(), 0, 0};
  uint64_t index = 0;
  for (uint64_t m = 0; m < messages && t.status == 0; ++m) {
    // The payload was written by the host before the launch: already visible to the worker.
    if (proxy::enqueue(owned, request, &index) != proxy::Status::ok) t.status = 1;
  }
  proxy::disown(owned);
  if (t.status == 0 && proxy::wait_completion(ring, index) != proxy::Status::ok) t.status = 2;
  t.end = now_ns();
  times[p] = t;
}

uint8_t pattern(uint64_t seed, uint64_t i) {
  uint64_t x = (seed + 1) * 0x9E3779B97F4A7C15ull + i * 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return static_cast<uint8_t>(x ^ (x >> 8));
}

}  // namespace

ProxyGoodputRun run_proxy_goodput(const ProxyGoodputConfig& c, uint64_t size, uint32_t run) {
  const uint64_t stride = (size + 4095) / 4096 * 4096;
  proxy::cuda::GpuProxyRig rig(proxy::cuda::tuned_gpu_proxy(c.workers, c.workers, c.batch, c.ring_entries),
                               stride * c.workers, proxy::cuda::CounterPlacement::host, c.device,
                               proxy::cuda::engine_per_worker(c.workers, c.nic_profile));
  for (uint32_t p = 0; p < c.workers; ++p) {
    for (uint64_t i = 0; i < size; ++i) rig.a.host[p * stride + i] = pattern((size * 64 + run) * 64 + p, i);
  }
  const uint64_t messages = messages_per_producer(c.bytes, c.max_messages, size, c.workers);
  const std::vector<proxy::RingHandle> rings = rig.producer_rings();
  proxy::RingHandle* device_rings = nullptr;
  ProducerTimes* times = nullptr;
  check_cuda(cudaMalloc(&device_rings, sizeof(proxy::RingHandle) * rings.size()), "gpu-goodput: ring handles");
  check_cuda(cudaMalloc(&times, sizeof(ProducerTimes) * c.workers), "gpu-goodput: producer times");
  check_cuda(cudaMemcpy(device_rings, rings.data(), sizeof(proxy::RingHandle) * rings.size(), cudaMemcpyHostToDevice),
             "gpu-goodput: ring handles");
  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "gpu-goodput: stream");
  rig.proxy->start();
  proxy_goodput_kernel<<<c.workers, 1, 0, stream>>>(device_rings, stride, static_cast<uint32_t>(size), messages, times);
  ProxyGoodputRun out;
  std::vector<ProducerTimes> t(c.workers);
  try {
    check_cuda(cudaGetLastError(), "launch proxy_goodput_kernel");
    wait_for_stream(stream, "gpu-goodput (mini-proxy) producers", 120, [&] { return "\n" + rig.state(); });
    check_cuda(cudaMemcpy(t.data(), times, sizeof(ProducerTimes) * c.workers, cudaMemcpyDeviceToHost),
               "gpu-goodput: producer times");
  } catch (...) {
    cudaFree(device_rings), cudaFree(times), cudaStreamDestroy(stream);
    throw;
  }
  cudaFree(device_rings), cudaFree(times), cudaStreamDestroy(stream);
  out.placement = rig.placement();
  out.messages = messages * c.workers;
  unsigned long long first = ~0ull, last = 0;
  for (uint32_t p = 0; p < c.workers; ++p) {
    if (t[p].status != 0) {
      out.failure = "producer " + std::to_string(p) + " (ring " + std::to_string(p) + "): " +
                    (t[p].status == 1 ? "enqueue" : "completion") + " failed";
      return out;
    }
    first = std::min(first, t[p].start), last = std::max(last, t[p].end);
  }
  out.gbps = double(size) * out.messages / double(last - first);  // bytes per ns = GB/s
  out.valid = true;
  for (uint32_t p = 0; p < c.workers && out.valid; ++p) {
    out.valid = std::memcmp(rig.a.host + p * stride, rig.b.host + p * stride, size) == 0;
  }
  if (!out.valid) out.failure = "payload: a destination region differs from its source";
  return out;
}

}  // namespace dissect::bench::gpu
