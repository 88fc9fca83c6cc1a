#include "kernel_cost_rig.h"

#include <cstring>

#include "dissect/bench/proxy_cuda_rig.h"
#include "dissect/common/cuda.h"
#include "dissect/common/error.h"
#include "dissect/softnic/gpu_engine.h"
#include "harness.cuh"
#include "kernel_cost_kernel.cuh"

namespace dissect::bench::gpu {

void KernelCostRig::read_bytes(void* host, const void* device, size_t bytes) const {
  check_cuda(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream_),
             "gpu-kernel-cost: read-back");
  check_cuda(cudaStreamSynchronize(stream_), "gpu-kernel-cost: read-back");
}

namespace {

__device__ void note_failure(uint32_t* failure, uint32_t status) {
  if (atomicCAS(&failure[0], 0u, status) == 0) failure[1] = blockIdx.x;
}

// ---- mini-gda: one loopback QP per block on the GPU engine -----------------------------------

__global__ void gda_drain(const LoopbackTarget* targets, uint32_t* failure) {
  const auto s = gda::quiet<KernelCostPolicy, gda::Sharing::exclusive>(targets[blockIdx.x].qp);
  if (s != gda::Status::ok) note_failure(failure, static_cast<uint32_t>(s));
}

__global__ void gda_fill_sources(const LoopbackTarget* targets, uint32_t bytes) {
  for (uint32_t i = threadIdx.x; i < bytes; i += blockDim.x) {
    targets[blockIdx.x].src[i] = kernel_cost_byte(blockIdx.x, i);
  }
}

// Counts destination bytes that are not the last message's (8 B: its value; more: the source's).
__global__ void gda_check_and_clear(const LoopbackTarget* targets, uint32_t messages,
                                    uint32_t bytes, unsigned long long* mismatches) {
  const LoopbackTarget& t = targets[blockIdx.x];
  const uint64_t value = kernel_cost_value(blockIdx.x, messages - 1);
  uint32_t wrong = 0;
  for (uint32_t i = threadIdx.x; i < bytes; i += blockDim.x) {
    const uint8_t want = bytes <= 8 ? static_cast<uint8_t>(value >> (8 * i)) : t.src[i];
    wrong += t.dst[i] != want;
    t.dst[i] = 0;
  }
  if (wrong) atomicAdd(mismatches, wrong);
}

class GdaRig final : public KernelCostRig {
 public:
  GdaRig(const LoopbackOptions& o, uint32_t blocks, size_t slot_bytes)
      : options_(o), qps_(with_shape(o, blocks, slot_bytes)) {
    stream_ = qps_.stream();
    mismatches_ = static_cast<unsigned long long*>(qps_.scratch(8));
    gda_fill_sources<<<blocks, KERNEL_COST_THREADS, 0, stream_>>>(
        qps_.targets(), static_cast<uint32_t>(slot_bytes));
    check_cuda(cudaGetLastError(), "gpu-kernel-cost: launch the source fill");
    qps_.synchronize("gpu-kernel-cost: source fill");
  }
  void* allocate(size_t bytes) override { return qps_.scratch(bytes); }
  void bind(KernelCostArgs& a) const override { a.targets = qps_.targets(); }
  void start(const std::vector<const void*>& kernels) override {
    std::vector<const void*> all = kernels;
    all.push_back(reinterpret_cast<const void*>(&gda_drain));
    all.push_back(reinterpret_cast<const void*>(&gda_check_and_clear));
    qps_.start(all, "gpu-kernel-cost");
  }
  void drain(const KernelCostArgs& a, uint32_t blocks) override {
    gda_drain<<<blocks, 1, 0, stream_>>>(a.targets, a.failure);
    check_cuda(cudaGetLastError(), "gpu-kernel-cost: launch the mini-gda drain");
  }
  void wait(const char* what) const override { qps_.wait(what); }
  bool check_and_clear(uint32_t messages, uint32_t bytes, uint32_t blocks) override {
    gda_check_and_clear<<<blocks, KERNEL_COST_THREADS, 0, stream_>>>(qps_.targets(), messages,
                                                                     bytes, mismatches_);
    check_cuda(cudaGetLastError(), "gpu-kernel-cost: launch the payload check");
    wait("gpu-kernel-cost: payload check");
    unsigned long long total = 0;
    read(&total, mismatches_, 1);
    const bool valid = total == seen_;  // the counter only grows: compare with the last check's
    seen_ = total;
    return valid;
  }
  int caller_sms() const override {
    int sms = 0;
    check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, options_.device),
               "gpu-kernel-cost: SM count");
    return sms - static_cast<int>(options_.engine_ctas);
  }
  std::vector<std::pair<std::string, std::string>> knobs() const override {
    return {{"qps", "one loopback RC QP per block"},
            {"engine_warps", std::to_string(options_.engine_ctas) + " CTAs x " +
                                 std::to_string(options_.engine_warps_per_cta) + " warps"},
            {"nic_profile", options_.nic_profile}};
  }

 private:
  static LoopbackOptions with_shape(LoopbackOptions o, uint32_t blocks, size_t slot_bytes) {
    o.qps = blocks;
    o.sq_wqebbs = 256;  // 64 messages of one WQEBB each, and room to spare
    o.buffer_bytes = std::max<size_t>(4096, slot_bytes);
    return o;
  }
  LoopbackOptions options_;
  LoopbackQps qps_;
  unsigned long long* mismatches_ = nullptr;
  unsigned long long seen_ = 0;
};

// ---- mini-proxy: 4 workers, 32 rings, host-thread engine -------------------------------------

__global__ void proxy_drain(const proxy::RingHandle* rings, uint32_t ring_count,
                            unsigned long long* last_index, uint32_t* failure) {
  const unsigned long long last = last_index[blockIdx.x];
  if (last == 0) return;
  const auto s = proxy::wait_completion(rings[blockIdx.x % ring_count], last - 1);
  if (s != proxy::Status::ok) note_failure(failure, 0x100 | static_cast<uint32_t>(s));
  last_index[blockIdx.x] = 0;
}

proxy::ProxyConfig proxy_config() {
  proxy::ProxyConfig c;
  c.workers = PROXY_WORKERS;
  c.rings = PROXY_RINGS;
  c.ring_entries = 1024;
  c.batch = 16;
  c.handoff = proxy::Handoff::tuned;
  return c;
}

class ProxyRig final : public KernelCostRig {
 public:
  ProxyRig(int device, uint32_t blocks, size_t slot_bytes)
      : device_(device), slot_bytes_(slot_bytes),
        rig_(proxy_config(), blocks * slot_bytes, proxy::cuda::CounterPlacement::host, device) {
    cudaSetDevice(device);
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "gpu-kernel-cost: stream");
    for (uint32_t b = 0; b < blocks; ++b) {
      for (size_t i = 0; i < slot_bytes; ++i) rig_.a.host[b * slot_bytes + i] = kernel_cost_byte(b, i);
    }
    const std::vector<proxy::RingHandle> rings = rig_.producer_rings();
    rings_ = static_cast<proxy::RingHandle*>(allocate(sizeof(proxy::RingHandle) * rings.size()));
    check_cuda(cudaMemcpy(rings_, rings.data(), sizeof(proxy::RingHandle) * rings.size(),
                          cudaMemcpyHostToDevice), "gpu-kernel-cost: ring handles");
    last_index_ = static_cast<unsigned long long*>(allocate(8 * blocks));
  }
  ~ProxyRig() override {
    for (void* p : memory_) cudaFree(p);  // the kernels are done; the rig stops its workers next
    if (stream_) cudaStreamDestroy(stream_);
  }
  void* allocate(size_t bytes) override {
    void* p = nullptr;
    check_cuda(cudaMalloc(&p, std::max<size_t>(bytes, 8)), "gpu-kernel-cost: device memory");
    check_cuda(cudaMemset(p, 0, std::max<size_t>(bytes, 8)), "gpu-kernel-cost: device memory");
    memory_.push_back(p);
    return p;
  }
  void bind(KernelCostArgs& a) const override {
    a.rings = rings_;
    a.ring_count = PROXY_RINGS;
    a.slot_bytes = static_cast<uint32_t>(slot_bytes_);
    a.last_index = last_index_;
  }
  void start(const std::vector<const void*>& kernels) override {
    for (const void* k : kernels) softnic::preload_kernel(k, "gpu-kernel-cost");
    rig_.proxy->start();  // the workers: without them no descriptor completes (H200, first run)
  }
  void drain(const KernelCostArgs& a, uint32_t blocks) override {
    proxy_drain<<<blocks, 1, 0, stream_>>>(a.rings, a.ring_count, a.last_index, a.failure);
    check_cuda(cudaGetLastError(), "gpu-kernel-cost: launch the mini-proxy drain");
  }
  void wait(const char* what) const override {
    // The harness's one bounded stream wait (harness.cuh), as the mini-gda rig's LoopbackQps::wait.
    wait_for_stream(stream_, what, 60, [] {
      return "mini-proxy: " + std::to_string(PROXY_WORKERS) + " workers, " + std::to_string(PROXY_RINGS) + " rings";
    });
  }
  // Every message copies block b's source slot of A into its slot of B (8 B too: the proxy
  // writes from memory), so the check compares the two; drained first (drain()).
  bool check_and_clear(uint32_t, uint32_t bytes, uint32_t blocks) override {
    bool valid = true;
    for (uint32_t b = 0; b < blocks; ++b) {
      uint8_t* dst = rig_.b.host + b * slot_bytes_;
      valid = valid && std::memcmp(dst, rig_.a.host + b * slot_bytes_, bytes) == 0;
      std::memset(dst, 0, bytes);
    }
    return valid;
  }
  int caller_sms() const override {
    int sms = 0;
    check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device_),
               "gpu-kernel-cost: SM count");
    return sms;  // the engine and the workers are host threads
  }
  std::vector<std::pair<std::string, std::string>> knobs() const override {
    return {{"proxy", std::to_string(PROXY_WORKERS) + " workers (T), " + std::to_string(PROXY_RINGS) +
                          " rings (R), block b on ring b % R, B=16, tuned handoff (shared rings)"},
            {"completion_counters", "host (mapped)"},
            {"engine", "softnic host-thread engine"},
            {"pinning", rig_.placement()}};
  }

 private:
  int device_;
  size_t slot_bytes_;
  proxy::cuda::GpuProxyRig rig_;
  proxy::RingHandle* rings_ = nullptr;
  unsigned long long* last_index_ = nullptr;
  std::vector<void*> memory_;
};

}  // namespace

std::unique_ptr<KernelCostRig> make_gda_rig(const LoopbackOptions& options, uint32_t blocks,
                                            size_t slot_bytes) {
  return std::make_unique<GdaRig>(options, blocks, slot_bytes);
}

std::unique_ptr<KernelCostRig> make_proxy_rig(int device, uint32_t blocks, size_t slot_bytes) {
  return std::make_unique<ProxyRig>(device, blocks, slot_bytes);
}

}  // namespace dissect::bench::gpu
