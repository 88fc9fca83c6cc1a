// GPU producers over the proxy: where their memory comes from, and the rig the GPU tests and the
// GPU experiment share (a softnic with its host-thread engine, one loopback QP pair per worker, two
// mapped host buffers A and B, window 0 = A -> B, window 1 = B -> A).
//
// CUDA code only (include after cuda_runtime.h is available). Host-thread only, like Proxy.
//
// Memory (docs/proxy.md "Where each counter lives"):
//   descriptors, ready[], ConsumerState, payloads  pinned host memory mapped into the GPU
//                                                  (cudaHostAlloc Mapped): the worker reads it at
//                                                  host speed, a GPU store reaches it as one posted
//                                                  PCIe write
//   ProducerState (head, tail cache)               cudaMalloc: only GPU producers touch it, so its
//                                                  loads stay in the GPU's L2
//   completion counters                            host (mapped, the default) or GPU-resident
//                                                  (cudaMallocManaged, preferred location the GPU;
//                                                  without GDRCopy this is the one way a CPU thread
//                                                  can store into GPU-preferred memory: the driver
//                                                  migrates the page on each side's access)
//
// Never calls cudaDeviceSynchronize. cudaFree / cudaFreeHost at destruction may synchronise the
// device: do not destroy a rig while a persistent kernel (a softnic GPU engine) runs on it.
#pragma once

#include <cuda_runtime.h>

#include <cctype>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "dissect/common/cuda.h"
#include "dissect/common/error.h"
#include "dissect/proxy/proxy.h"
#include "dissect/softnic/softnic.h"

namespace dissect::proxy::cuda {

inline Allocator mapped_host_allocator() {
  Allocator a;
  a.allocate = [](size_t bytes) {
    void* p = nullptr;
    check_cuda(cudaHostAlloc(&p, bytes, cudaHostAllocMapped | cudaHostAllocPortable),
          "cudaHostAlloc of " + std::to_string(bytes) + " bytes");
    std::memset(p, 0, bytes);
    return p;
  };
  a.release = [](void* p) { cudaFreeHost(p); };
  a.producer_alias = [](void* p) {
    void* d = nullptr;
    check_cuda(cudaHostGetDevicePointer(&d, p, 0), "cudaHostGetDevicePointer");
    return d;
  };
  return a;
}

inline Allocator device_allocator() {
  Allocator a;
  a.allocate = [](size_t bytes) {
    void* p = nullptr;
    check_cuda(cudaMalloc(&p, bytes), "cudaMalloc of " + std::to_string(bytes) + " bytes");
    check_cuda(cudaMemset(p, 0, bytes), "cudaMemset of the producer state");
    return p;
  };
  a.release = [](void* p) { cudaFree(p); };
  a.host_readable = false;
  return a;
}

// R completion counters in managed memory preferred on `device` (the GPU-resident variant).
struct ManagedCounters {
  uint64_t* words = nullptr;
  ManagedCounters(uint32_t count, int device) {
    const size_t bytes = size_t{count} * sizeof(uint64_t);
    check_cuda(cudaMallocManaged(&words, bytes), "cudaMallocManaged of " + std::to_string(bytes) + " bytes");
    std::memset(words, 0, bytes);
    cudaMemLocation gpu{}, host{};
    gpu.type = cudaMemLocationTypeDevice;
    gpu.id = device;
    host.type = cudaMemLocationTypeHost;
    check_cuda(cudaMemAdvise(words, bytes, cudaMemAdviseSetPreferredLocation, gpu),
          "advise preferred location GPU " + std::to_string(device));
    check_cuda(cudaMemAdvise(words, bytes, cudaMemAdviseSetAccessedBy, host), "advise accessed by the CPU");
  }
  ~ManagedCounters() { cudaFree(words); }
  ManagedCounters(const ManagedCounters&) = delete;
  ManagedCounters& operator=(const ManagedCounters&) = delete;
};

// NUMA node of a CUDA device from sysfs, -1 when unknown.
inline int gpu_numa_node(int device) {
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) != cudaSuccess) return -1;
  for (char* c = bus; *c; ++c) *c = static_cast<char>(std::tolower(*c));
  std::FILE* f = std::fopen((std::string("/sys/bus/pci/devices/") + bus + "/numa_node").c_str(), "r");
  int node = -1;
  if (f != nullptr) {
    if (std::fscanf(f, "%d", &node) != 1) node = -1;
    std::fclose(f);
  }
  return node;
}

enum class CounterPlacement { host, gpu };
inline const char* to_string(CounterPlacement p) { return p == CounterPlacement::host ? "host" : "gpu"; }

// Pinned mapped host bytes, freed on destruction.
struct MappedBuffer {
  uint8_t* host = nullptr;
  uint8_t* device = nullptr;  // the GPU's address of the same bytes
  size_t bytes = 0;
  explicit MappedBuffer(size_t n) : bytes(n) {
    const Allocator a = mapped_host_allocator();
    host = static_cast<uint8_t*>(a.allocate(n));
    device = static_cast<uint8_t*>(a.producer_alias(host));
  }
  ~MappedBuffer() { cudaFreeHost(host); }
  MappedBuffer(const MappedBuffer&) = delete;
  MappedBuffer& operator=(const MappedBuffer&) = delete;
};

// The proxy gpu-load and gpu-goodput drive: T workers over `rings` rings, B per post, the tuned
// handoff; and the host engine that executes for it, one thread per worker QP so that the model
// keeps up with T, on the named timing profile.
inline ProxyConfig tuned_gpu_proxy(uint32_t workers, uint32_t rings, uint32_t batch, uint32_t ring_entries) {
  ProxyConfig config;
  config.workers = workers;
  config.rings = rings;
  config.batch = batch;
  config.ring_entries = ring_entries;
  config.handoff = Handoff::tuned;
  return config;
}
inline softnic::SoftNicOptions engine_per_worker(uint32_t workers, const std::string& nic_profile) {
  softnic::SoftNicOptions o;
  o.engine_threads = workers;
  o.profile = softnic::timing_profile(nic_profile);
  return o;
}

// WQEBBs of a worker QP's send queue unless an experiment sets it (gpu-load --worker-sq-depth).
inline constexpr uint32_t WORKER_SQ_WQEBBS = 256;

struct GpuProxyRig {
  // `config.memory` and the completion counters are set here; pinning follows config (with
  // numa_node defaulting to the GPU's node). `nic` sets the host engine's threads and timing
  // profile (gpu-load and gpu-goodput run the proxy under cx7-ib too).
  GpuProxyRig(ProxyConfig config, size_t buffer_bytes, CounterPlacement counters, int device = 0,
              const softnic::SoftNicOptions& nic = {}, uint32_t worker_sq_wqebbs = WORKER_SQ_WQEBBS)
      : softnic(std::make_unique<softnic::SoftNic>(nic)), pd(softnic->create_pd()), a(buffer_bytes),
        b(buffer_bytes), counter_placement(counters) {
    config.memory.shared = mapped_host_allocator();
    config.memory.producer = device_allocator();
    if (config.numa_node < 0) config.numa_node = gpu_numa_node(device);
    if (counters == CounterPlacement::gpu) {
      managed = std::make_unique<ManagedCounters>(config.rings, device);
      config.completion_counters = managed->words;
      config.completion_counters_for_producer = managed->words;  // one address under UVA
    }
    proxy = std::make_unique<Proxy>(config, create_qps(config.workers, worker_sq_wqebbs), windows());
  }
  ~GpuProxyRig() {
    if (proxy) proxy->stop(StopMode::abandon);
    softnic->stop();  // nothing may still execute into the buffers destroyed next
    proxy.reset();    // before the managed counters it writes
  }

  // Device copies of every ring's producer handle, for a kernel argument.
  std::vector<RingHandle> producer_rings() const {
    std::vector<RingHandle> out;
    for (uint32_t r = 0; r < proxy->config().rings; ++r) out.push_back(proxy->ring(r));
    return out;
  }
  uint64_t executed_wqes() const {
    uint64_t n = 0;
    for (const auto& qp : qps) n += softnic->counters(qp->qpn()).wqes_executed;
    return n;
  }
  std::string placement() const { return proxy->placement(); }

  // What the proxy and its QPs were doing, for an error: stops the workers (abandon) and names
  // every ring with work left, every worker's counts and every worker QP's indices, so that a
  // stall says whether the descriptors were not seen (published 0), not posted (room) or not
  // completed (prod_idx ahead of cons_idx and the model's executed count).
  std::string state() {
    std::string out = proxy->stop(StopMode::abandon).describe();
    for (const WorkerStats& w : proxy->stats()) {
      out += "worker " + std::to_string(w.worker) + ": " + std::to_string(w.descriptors) + " descriptors in " +
             std::to_string(w.posts) + " posts, " + std::to_string(w.busy_passes) + " of " +
             std::to_string(w.passes) + " passes busy, " + std::to_string(w.full_passes) +
             " ended with the send queue full\n";
    }
    // Every ring's tail: a producer's "reached" far below its ring's tail here means the ring
    // moved only after the producers stopped (a worker that did not serve it in time).
    out += "ring tails:";
    for (uint32_t r = 0; r < proxy->config().rings; ++r) out += " " + std::to_string(proxy->host_view(r).consumer->tail);
    out += "\n";
    for (const auto& qp : qps) {
      const nic::QpHandle h = qp->handle();
      out += "QP " + hex(h.qpn) + ": reserved " + std::to_string(h.state->resv_head) + ", rung " +
             std::to_string(h.state->prod_idx) + ", completed " + std::to_string(h.state->cons_idx) +
             ", CQEs consumed " + std::to_string(h.state->cq_ci) + "; the model executed " +
             std::to_string(softnic->counters(qp->qpn()).wqes_executed) + " WQEs, wrote " +
             std::to_string(softnic->counters(qp->qpn()).cqes_written) + " CQEs\n";
    }
    return out;
  }

  std::unique_ptr<softnic::SoftNic> softnic;
  std::unique_ptr<nic::ProtectionDomain> pd;
  std::vector<std::unique_ptr<nic::QueuePair>> qps, peers;
  MappedBuffer a, b;
  nic::MemoryRegion a_mr, b_mr;
  CounterPlacement counter_placement;
  std::unique_ptr<ManagedCounters> managed;
  std::unique_ptr<Proxy> proxy;

 private:
  // The workers' sending QPs first, so that with N engine threads QP w (worker w) is served by
  // thread w % N and the receiving peers, which never send, take no thread's share of them.
  std::vector<nic::QpHandle> create_qps(uint32_t workers, uint32_t sq_wqebbs) {
    nic::QpAttributes attributes;
    attributes.sq_wqebbs = sq_wqebbs;
    std::vector<nic::QpHandle> handles;
    for (uint32_t w = 0; w < workers; ++w) {
      attributes.telemetry_channel = static_cast<int>(w);  // a channel = a worker and its rings
      qps.push_back(pd->create_qp(attributes));
    }
    for (uint32_t w = 0; w < workers; ++w) {
      attributes.telemetry_channel = static_cast<int>(w);
      peers.push_back(pd->create_qp(attributes));
      qps[w]->connect(peers[w]->endpoint());
      peers[w]->connect(qps[w]->endpoint());
      handles.push_back(qps[w]->handle());
    }
    return handles;
  }
  std::vector<Window> windows() {
    a_mr = pd->register_memory(a.host, a.bytes, nic::ACCESS_ALL);
    b_mr = pd->register_memory(b.host, b.bytes, nic::ACCESS_ALL);
    const uint64_t pa = reinterpret_cast<uintptr_t>(a.host), pb = reinterpret_cast<uintptr_t>(b.host);
    return {{pa, a_mr.lkey, pb, b_mr.rkey}, {pb, b_mr.lkey, pa, a_mr.rkey}};
  }
};

}  // namespace dissect::proxy::cuda
