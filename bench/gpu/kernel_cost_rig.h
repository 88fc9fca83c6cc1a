// The rigs of gpu-kernel-cost's two paths, behind what a measurement needs from either: device
// memory for the runs, the path's handles in the kernel's arguments, the final completion drain
// (a second kernel, outside the timed span), the payload check, and the SMs left to the callers.
//   mini-gda    LoopbackQps (one loopback QP per block) on the softnic's GPU engine, whose CTAs
//               hold whole SMs
//   mini-proxy  GpuProxyRig: 4 host workers, 32 rings in mapped host memory, the softnic's
//               host-thread engine; window 0 writes buffer A's block slot into B's
// Host-thread only. Memory is allocated before start() (a running GPU engine must not see a
// cudaMalloc: loopback_qps.h).
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernel_cost.h"

namespace dissect::bench::gpu {

inline constexpr uint32_t PROXY_WORKERS = 4;  // the paper's mini-proxy: four workers, 32 rings
inline constexpr uint32_t PROXY_RINGS = 32;

class KernelCostRig {
 public:
  virtual ~KernelCostRig() = default;
  virtual void* allocate(size_t bytes) = 0;  // zeroed device memory, before start()
  virtual void bind(KernelCostArgs& args) const = 0;  // the path's handles
  // Loads `kernels` (and the rig's own), then starts what executes the messages.
  virtual void start(const std::vector<const void*>& kernels) = 0;
  virtual void drain(const KernelCostArgs& args, uint32_t blocks) = 0;  // launched on stream()
  virtual void wait(const char* what) const = 0;  // bounded, for everything on stream()
  // Destination slots hold what `messages` messages of `bytes` put there; then cleared.
  virtual bool check_and_clear(uint32_t messages, uint32_t bytes, uint32_t blocks) = 0;
  virtual int caller_sms() const = 0;
  virtual std::vector<std::pair<std::string, std::string>> knobs() const = 0;
  cudaStream_t stream() const { return stream_; }
  template <typename T>
  void read(T* host, const T* device, size_t count) const {
    read_bytes(host, device, sizeof(T) * count);
  }

 protected:
  void read_bytes(void* host, const void* device, size_t bytes) const;
  cudaStream_t stream_ = nullptr;
};

// `slot_bytes`: each block's source and destination bytes (its largest message).
std::unique_ptr<KernelCostRig> make_gda_rig(const LoopbackOptions& options, uint32_t blocks,
                                            size_t slot_bytes);
std::unique_ptr<KernelCostRig> make_proxy_rig(int device, uint32_t blocks, size_t slot_bytes);

}  // namespace dissect::bench::gpu
