// mini-proxy with GPU producers: GPU threads enqueue through the baseline and tuned handoffs into
// rings in mapped host memory; T host workers post them through the softnic (host-thread engine);
// the kernel waits on the ring's completion counter (host-resident, or GPU-resident managed memory).
//
//   proxy_gpu_test <case>...   exit 0 pass, 1 fail, 77 skipped (reason on stderr)
//
// Every producer p issues `requests` pairs: an RDMA WRITE of 1..64 pattern bytes from its own slot
// of A into the same slot of B, and a FETCH_ADD of 1 on its own counter word in B. Afterwards: every
// slot byte-exact with nothing past its length (no lost or misplaced write), every counter word
// exactly `requests` (no fetch-add lost or executed twice), the engine executed exactly 2 x requests
// x producers WQEs, every ring's completion counter equals what was enqueued on it, and the drained
// proxy reports nothing left.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "consumer.h"  // src/proxy: the worker's peek
#include "dissect/proxy/config.h"
#include "dissect/bench/proxy_cuda_rig.h"
#include "dissect/proxy/handoff.h"
#include "gpu_cases.h"

namespace proxy = dissect::proxy;
namespace pcuda = dissect::proxy::cuda;
using proxy::Sharing;

namespace {

constexpr uint32_t SLOT = 64;  // bytes per write slot in A and B
constexpr uint32_t UNSET = 0xffffffffu;

DISSECT_HD inline uint8_t pattern_byte(uint32_t op, uint32_t b) {
  return static_cast<uint8_t>(((op * 2654435761u) ^ (b * 40503u + 0x9e37u)) >> 7) | 1;
}
DISSECT_HD inline uint32_t length_of(uint32_t op) { return 1 + (op * 37) % SLOT; }

struct Plan {
  const proxy::RingHandle* rings;  // device copy of the producer handles
  uint32_t ring_count;             // producer p uses ring p % ring_count
  uint32_t producers;
  uint32_t requests;               // write + fetch-add pairs per producer
  uint32_t wait_every;             // wait for completion after this many pairs (0: at the end only)
  uint8_t* a;                      // the GPU's address of buffer A (sources, fetch-add scratch)
  uint32_t* status;                // per producer, mapped host: 0 ok, else Status | pair << 8
};

DISSECT_HD inline uint32_t counters_offset(const Plan& plan) { return plan.producers * plan.requests * SLOT; }

DISSECT_HD inline uint32_t failure(proxy::Status s, uint32_t pair) {
  return static_cast<uint32_t>(s) | pair << 8;
}

// The tuned handoff through an OwnedRing (head and cached tail in registers, posted descriptor
// stores): the producer orders its payloads itself, with order_payloads().
struct owned_tuned {};

template <typename Handoff, Sharing S>
__device__ proxy::Status enqueue_one(const proxy::RingHandle& ring, proxy::OwnedRing& owned,
                                     const proxy::Request& request, uint64_t* index) {
  if constexpr (std::is_same_v<Handoff, owned_tuned>) return proxy::enqueue(owned, request, index);
  else return proxy::enqueue<Handoff, S>(ring, request, index);
}

// Writes the payload, then enqueues the write and the fetch-add; *last = the fetch-add's index.
template <typename Handoff, Sharing S>
__device__ proxy::Status enqueue_pair(const proxy::RingHandle& ring, proxy::OwnedRing& owned,
                                      const Plan& plan, uint32_t p, uint32_t k, uint64_t* last) {
  const uint32_t op = p * plan.requests + k;
  // Plain stores: the handoff's system-scope release (tuned: the descriptor store; baseline: the
  // ready flag), or order_payloads() for an OwnedRing, orders them before the worker can see the
  // descriptor that makes the NIC read them.
  for (uint32_t b = 0; b < length_of(op); ++b) plan.a[size_t{op} * SLOT + b] = pattern_byte(op, b);
  if constexpr (std::is_same_v<Handoff, owned_tuned>) proxy::order_payloads();
  const proxy::Request write{proxy::Operation::write, 0, length_of(op), op * SLOT, uint64_t{op} * SLOT};
  const proxy::Status s = enqueue_one<Handoff, S>(ring, owned, write, last);
  if (s != proxy::Status::ok) return s;
  const uint32_t counter = counters_offset(plan) + p * 8;
  const proxy::Request add{proxy::Operation::fetch_add, 0, 1, counter, counter};
  return enqueue_one<Handoff, S>(ring, owned, add, last);
}

template <typename Handoff, Sharing S>
__global__ void produce(Plan plan) {
  const uint32_t p = blockIdx.x * blockDim.x + threadIdx.x;
  const proxy::RingHandle ring = plan.rings[p % plan.ring_count];
  proxy::OwnedRing owned = proxy::own(ring);
  uint64_t last = 0;
  for (uint32_t k = 0; k < plan.requests; ++k) {
    proxy::Status s = enqueue_pair<Handoff, S>(ring, owned, plan, p, k, &last);
    if (s == proxy::Status::ok && plan.wait_every != 0 && (k + 1) % plan.wait_every == 0) {
      s = proxy::wait_completion(ring, last);
    }
    if (s != proxy::Status::ok) {
      plan.status[p] = failure(s, k);
      return;
    }
  }
  if constexpr (std::is_same_v<Handoff, owned_tuned>) proxy::disown(owned);
  const proxy::Status s = proxy::wait_completion(ring, last);
  plan.status[p] = s == proxy::Status::ok ? 0 : failure(s, plan.requests);
}

struct Shape {
  uint32_t ctas, threads;  // producers = ctas x threads
  uint32_t workers, rings, entries, requests, wait_every;
  pcuda::CounterPlacement counters;
  bool start_stopped;      // backpressure: the proxy starts only after the ring has filled
};

int device_count_or_skip() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::fprintf(stderr, "no CUDA device: skipped\n");
    return 0;
  }
  return n;
}

bool wait_stream(cudaStream_t s, double seconds) {
  const auto began = std::chrono::steady_clock::now();
  for (;;) {
    const cudaError_t q = cudaStreamQuery(s);
    if (q == cudaSuccess) return true;
    GT_CHECK(q == cudaErrorNotReady, "producer kernel failed: %s", cudaGetErrorString(q));
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count() > seconds) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { dissect::check_cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream"); }
  ~Stream() { cudaStreamDestroy(s); }
};

// Device copy of the rings' producer handles.
struct DeviceRings {
  proxy::RingHandle* rings = nullptr;
  DeviceRings(const std::vector<proxy::RingHandle>& handles, cudaStream_t s) {
    const size_t bytes = handles.size() * sizeof(proxy::RingHandle);
    dissect::check_cuda(cudaMalloc(&rings, bytes), "ring handles");
    dissect::check_cuda(cudaMemcpyAsync(rings, handles.data(), bytes, cudaMemcpyHostToDevice, s), "copy ring handles");
    dissect::check_cuda(cudaStreamSynchronize(s), "copy ring handles");
  }
  ~DeviceRings() { cudaFree(rings); }
};

proxy::ProxyConfig config_for(const Shape& shape, proxy::Handoff handoff) {
  proxy::ProxyConfig c;
  c.workers = shape.workers;
  c.rings = shape.rings;
  c.ring_entries = shape.entries;
  c.batch = 16;
  c.handoff = handoff;
  return c;
}

void expect_payloads(const pcuda::GpuProxyRig& rig, const Plan& plan) {
  for (uint32_t op = 0; op < plan.producers * plan.requests; ++op) {
    const uint8_t* slot = rig.b.host + size_t{op} * SLOT;
    for (uint32_t b = 0; b < SLOT; ++b) {
      const uint8_t want = b < length_of(op) ? pattern_byte(op, b) : 0;
      GT_CHECK(slot[b] == want, "write %u (producer %u) byte %u of %u: 0x%02x, want 0x%02x", op,
               op / plan.requests, b, length_of(op), slot[b], want);
    }
  }
  const auto* counters = reinterpret_cast<const uint64_t*>(rig.b.host + counters_offset(plan));
  for (uint32_t p = 0; p < plan.producers; ++p) {
    GT_CHECK(counters[p] == plan.requests, "producer %u's fetch-add counter is %llu, want %u", p,
             static_cast<unsigned long long>(counters[p]), plan.requests);
  }
}

void expect_accounting(pcuda::GpuProxyRig& rig, const Plan& plan) {
  const uint64_t total = uint64_t{2} * plan.requests * plan.producers;
  GT_CHECK(rig.executed_wqes() == total, "engine executed %llu WQEs, want %llu",
           static_cast<unsigned long long>(rig.executed_wqes()), static_cast<unsigned long long>(total));
  uint64_t consumed = 0;
  for (const auto& st : rig.proxy->stats()) {
    consumed += st.descriptors;
    GT_CHECK(st.bad_descriptors == 0, "worker %u: %llu bad descriptors", st.worker,
             static_cast<unsigned long long>(st.bad_descriptors));
  }
  GT_CHECK(consumed == total, "workers consumed %llu descriptors, want %llu",
           static_cast<unsigned long long>(consumed), static_cast<unsigned long long>(total));
  for (uint32_t r = 0; r < plan.ring_count; ++r) {
    const uint32_t producers_here = (plan.producers + plan.ring_count - 1 - r) / plan.ring_count;
    const uint64_t want = uint64_t{2} * plan.requests * producers_here;
    const uint64_t got = *rig.proxy->host_view(r).completed;
    GT_CHECK(got == want, "ring %u (%s counter): completed %llu, want %llu", r,
             pcuda::to_string(rig.counter_placement), static_cast<unsigned long long>(got),
             static_cast<unsigned long long>(want));
  }
  const proxy::ShutdownReport report = rig.proxy->stop(proxy::StopMode::drain);
  GT_CHECK(report.drained, "proxy not drained:\n%s", report.describe().c_str());
}

// With the proxy stopped, the producers must stop at exactly `entries` published descriptors and
// leave everything else alone: nothing executed, no later lap written over an unconsumed slot.
void expect_full_ring_blocks(pcuda::GpuProxyRig& rig, const Shape& shape, proxy::Handoff handoff,
                             cudaStream_t s) {
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  GT_CHECK(cudaStreamQuery(s) == cudaErrorNotReady, "producers finished although the proxy never ran");
  const proxy::RingHandle ring = rig.proxy->host_view(0);
  proxy::Request r;
  for (uint64_t i = 0; i < shape.entries; ++i) {
    GT_CHECK(proxy::peek(handoff, ring, i, &r), "descriptor %llu of the full ring not published",
             static_cast<unsigned long long>(i));
  }
  GT_CHECK(!proxy::peek(handoff, ring, shape.entries, &r), "descriptor %u published over an unconsumed slot",
           shape.entries);
  GT_CHECK(ring.consumer->tail == 0, "tail moved to %llu with no worker",
           static_cast<unsigned long long>(ring.consumer->tail));
  GT_CHECK(rig.executed_wqes() == 0, "engine executed %llu WQEs with no worker",
           static_cast<unsigned long long>(rig.executed_wqes()));
}

template <typename Handoff, Sharing S>
int run(const Shape& shape, proxy::Handoff handoff) {
  if (device_count_or_skip() == 0) return dissect::gputest::SKIP;
  if (shape.counters == pcuda::CounterPlacement::gpu) {
    int managed = 0;
    cudaDeviceGetAttribute(&managed, cudaDevAttrConcurrentManagedAccess, 0);
    if (!managed) {
      std::fprintf(stderr, "device 0 has no concurrent managed access (GPU-resident counter): skipped\n");
      return dissect::gputest::SKIP;
    }
  }
  const uint32_t producers = shape.ctas * shape.threads;
  const size_t bytes = size_t{producers} * shape.requests * SLOT + size_t{producers} * 8;
  pcuda::GpuProxyRig rig(config_for(shape, handoff), bytes, shape.counters);
  Stream stream;
  DeviceRings rings(rig.producer_rings(), stream.s);
  pcuda::MappedBuffer status(size_t{producers} * sizeof(uint32_t));
  auto* statuses = reinterpret_cast<uint32_t*>(status.host);
  for (uint32_t p = 0; p < producers; ++p) statuses[p] = UNSET;
  const Plan plan{rings.rings, shape.rings, producers, shape.requests, shape.wait_every, rig.a.device,
                  reinterpret_cast<uint32_t*>(status.device)};
  if (!shape.start_stopped) rig.proxy->start();
  produce<Handoff, S><<<shape.ctas, shape.threads, 0, stream.s>>>(plan);
  dissect::check_cuda(cudaGetLastError(), "launch produce");
  if (shape.start_stopped) {
    expect_full_ring_blocks(rig, shape, handoff, stream.s);
    rig.proxy->start();
  }
  GT_CHECK(wait_stream(stream.s, 40), "producers did not finish in 40 s:\n%s",
           rig.proxy->stop(proxy::StopMode::abandon).describe().c_str());
  for (uint32_t p = 0; p < producers; ++p) {
    GT_CHECK(statuses[p] == 0, "producer %u: status %s at pair %u (raw 0x%x)", p,
             proxy::to_string(static_cast<proxy::Status>(statuses[p] & 0xff)), statuses[p] >> 8, statuses[p]);
  }
  expect_payloads(rig, plan);
  expect_accounting(rig, plan);
  std::printf("%s: %u producers (%u x %u), T=%u R=%u entries=%u, %u pairs each, %s completion counter, "
              "placement: %s\n", proxy::to_string(handoff), producers, shape.ctas, shape.threads,
              shape.workers, shape.rings, shape.entries, shape.requests, pcuda::to_string(shape.counters),
              rig.placement().c_str());
  return 0;
}

using pcuda::CounterPlacement;
constexpr auto kHost = CounterPlacement::host;
constexpr auto kGpu = CounterPlacement::gpu;

int baseline(const Shape& s) { return run<proxy::baseline, Sharing::shared>(s, proxy::Handoff::baseline); }
int tuned(const Shape& s) { return run<proxy::tuned, Sharing::exclusive>(s, proxy::Handoff::tuned); }
int owned(const Shape& s) { return run<owned_tuned, Sharing::exclusive>(s, proxy::Handoff::tuned); }

}  // namespace

int main(int argc, char** argv) {
  // {ctas, threads, T, R, entries, pairs, wait_every, counter, start_stopped}. Tuned: one producer
  // per ring (R = producers); baseline: producers share rings.
  const dissect::gputest::Cases cases = {
      {"baseline_one_thread", [] { return baseline({1, 1, 1, 1, 64, 256, 0, kHost, false}); }},
      {"tuned_one_thread", [] { return tuned({1, 1, 1, 1, 64, 256, 0, kHost, false}); }},
      {"baseline_warp_shared_ring", [] { return baseline({1, 32, 1, 1, 64, 32, 0, kHost, false}); }},
      {"tuned_warp_private_rings", [] { return tuned({1, 32, 2, 32, 64, 32, 0, kHost, false}); }},
      {"baseline_ctas_shared_rings", [] { return baseline({4, 32, 2, 2, 256, 16, 4, kHost, false}); }},
      {"tuned_ctas_private_rings", [] { return tuned({4, 8, 4, 32, 64, 32, 4, kHost, false}); }},
      {"baseline_gpu_counter", [] { return baseline({1, 1, 1, 1, 64, 64, 1, kGpu, false}); }},
      {"tuned_gpu_counter", [] { return tuned({1, 1, 1, 1, 64, 64, 1, kGpu, false}); }},
      {"baseline_backpressure", [] { return baseline({1, 32, 1, 1, 4, 8, 0, kHost, true}); }},
      {"tuned_backpressure", [] { return tuned({1, 1, 1, 1, 4, 64, 0, kHost, true}); }},
      {"owned_one_thread", [] { return owned({1, 1, 1, 1, 64, 256, 0, kHost, false}); }},
      {"owned_ctas_private_rings", [] { return owned({4, 8, 4, 32, 64, 32, 4, kHost, false}); }},
      {"owned_backpressure", [] { return owned({1, 1, 1, 1, 4, 64, 0, kHost, true}); }},
  };
  return dissect::gputest::run_cases(argc, argv, cases);
}
