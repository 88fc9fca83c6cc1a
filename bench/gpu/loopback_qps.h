// Q loopback QPs on one GPU softnic, for the GPU experiments that need many queues (nic-ceiling,
// gpu-rate, gpu-inline-rate, gpu-completion-scope): each QP connected to itself, so the engine
// executes every write of one NIC, with a source and a destination buffer per QP in GPU memory.
//
// Everything is allocated before the engine starts and freed after it stops: allocating or
// freeing beside a running engine kernel can wait forever (softnic/gpu_engine.h, HAZARDS). So the
// kernels an experiment launches are loaded before start() too.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dissect/bench/gpu_pe.h"
#include "dissect/nic/handles.h"
#include "dissect/nic/nic.h"
#include "dissect/softnic/gpu_engine.h"
#include "dissect/nic/qp_counters.h"

namespace dissect::bench::gpu {

struct LoopbackTarget {
  nic::QpHandle qp;
  uint8_t* src;
  uint8_t* dst;
  uint32_t lkey, rkey;
};

struct LoopbackOptions {
  int device = 0;
  uint32_t engine_ctas = 8;
  uint32_t engine_warps_per_cta = 8;
  std::string nic_profile = "fast";  // fast | cx7-ib | a profile file (softnic/profile.h)
  bool doorbell_dates = false;       // SoftNicOptions::doorbell_dates: CQEs carry the hops
  uint32_t qps = 1;
  uint32_t sq_wqebbs = 4096;         // send queue depth per QP (the CQ has as many entries)
  uint32_t max_inline = 64;
  size_t buffer_bytes = 4096;        // source and destination bytes per QP
  nic::DoorbellPath doorbell = nic::DoorbellPath::direct;  // cpu_assisted: a host thread rings
  bool send_cq_collapsed = false;    // every CQE in entry 0 (NVSHMEM's CQs; nic.h QpAttributes)
  uint32_t shared_cq_qps = 0;        // QPs 0 .. n-1 share one send CQ in GPU memory (nic.h
                                     // CompletionQueue); 0: each QP has its own
};

class LoopbackQps {
 public:
  explicit LoopbackQps(const LoopbackOptions& options);
  ~LoopbackQps();
  LoopbackQps(const LoopbackQps&) = delete;
  LoopbackQps& operator=(const LoopbackQps&) = delete;

  // Loads `kernels` (preload_kernel), then starts the engine.
  void start(const std::vector<const void*>& kernels, const char* what);

  const LoopbackTarget* targets() const { return targets_; }   // device array, one per QP
  const nic::QpHandle* handles() const { return handles_; }    // device array, one per QP
  const std::vector<LoopbackTarget>& host_targets() const { return host_targets_; }
  cudaStream_t stream() const { return stream_; }
  softnic::SoftNic& nic() { return *nic_; }
  // Device memory the experiment needs beside the queues, allocated before start().
  void* scratch(size_t bytes);
  // Gives every QP a telemetry slot sampling 1 WQE in `n` (nic/qp_counters.h: a counter block
  // and post stamps in GPU memory, as GpuQpSlot hands a kernel), before start(). Returns the
  // blocks, one per QP, to read back after the run.
  std::vector<const telemetry::QpCounters*> attach_telemetry(uint64_t n);
  // The deepest backlog the NIC model saw on any of the QPs so far (ModelCounters::deepest_backlog,
  // WQEBBs announced and not executed when a window opened): the fullest QP's.
  uint64_t deepest_backlog();

  template <typename T>
  void read(T* host, const T* device, size_t count) const {
    read_bytes(host, device, sizeof(T) * count);
  }
  void write_bytes(void* device, const void* host, size_t bytes) const;
  void synchronize(const char* what) const;
  // Waits (bounded) for the kernels on stream(); throws naming `what` and the engine's status.
  void wait(const char* what, double seconds = 60) const;

 private:
  void read_bytes(void* host, const void* device, size_t bytes) const;

  // Per-thread local memory for the experiments' kernels (gpu-rate's one-thread-many-QPs keeps
  // an OwnedQp per QP there).
  static constexpr size_t LOCAL_MEMORY_RESERVE = 8192;
  int device_ = 0;
  uint32_t sq_wqebbs_ = 0;
  std::unique_ptr<softnic::SoftNic> nic_;
  std::unique_ptr<nic::CompletionQueue> shared_cq_;  // destroyed after the QPs, before the NIC
  std::vector<GpuPe> pes_;
  std::vector<LoopbackTarget> host_targets_;
  LoopbackTarget* targets_ = nullptr;
  nic::QpHandle* handles_ = nullptr;
  std::vector<void*> scratch_;
  cudaStream_t stream_ = nullptr;
};

}  // namespace dissect::bench::gpu
