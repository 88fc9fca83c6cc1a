// The MoE client on one GPU: R ranks in one process on one GPU softnic (GPU engine kernel), each
// rank with its PD, a GPU arena registered once, and a QP per (destination rank, local expert)
// connected to the destination's mirror QP (moe/handle.h). One kernel launch runs a phase of every
// rank at once (blockIdx picks the rank), so all ranks start together and every warp the phase
// waits on is resident: the kernel boundary is the barrier before each sample.
//
// Transports: mini-gda (the warps build WQEs into GPU-resident QPs) or mini-proxy with GPU
// producers (the warps write descriptors into mapped host rings with the tuned handoff; each
// rank's Proxy has a CPU worker per destination rank, whose host-resident QP the GPU engine reads).
//
// Everything is allocated and every kernel loaded before the engine starts (gpu_engine.h HAZARDS).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dissect/moe/handle.h"
#include "dissect/moe/reference.h"
#include "dissect/moe/routing.h"
#include "dissect/moe/stamps.h"
#include "dissect/nic/nic.h"
#include "dissect/proxy/proxy.h"
#include "dissect/softnic/gpu_engine.h"

namespace dissect::bench::gpu {

enum class MoeTransportKind { mini_gda, mini_proxy };
const char* to_string(MoeTransportKind kind);

struct GpuMoeOptions {
  MoeTransportKind transport = MoeTransportKind::mini_gda;
  moe::MoeShape shape;
  moe::RoutingOptions routing;
  int device = 0;
  uint32_t warps_per_rank = 32;   // a phase's warps per rank (8 per CTA)
  uint32_t doorbell_batch = 4;    // DeepEP's kNumRequestInBatch (mini-proxy: the worker's chain)
  uint32_t engine_ctas = 16;
  uint32_t engine_warps_per_cta = 8;
  std::string nic_profile = "fast";
  uint64_t timeout_ns = 5'000'000'000ull;
  size_t l2_flush_bytes = 256u << 20;  // DeepEP's bench zeroes 256 MB between samples
};

// One sample: CUDA-event times of each phase and each rank's in-kernel stamps.
struct MoeSample {
  double dispatch_us = 0, combine_us = 0;
  std::vector<moe::PhaseStamps> dispatch, combine;  // per rank
};

inline constexpr uint32_t MOE_WARPS_PER_CTA = 8;

class GpuMoeRig {
 public:
  explicit GpuMoeRig(const GpuMoeOptions& options);
  ~GpuMoeRig();
  GpuMoeRig(const GpuMoeRig&) = delete;
  GpuMoeRig& operator=(const GpuMoeRig&) = delete;

  // Reset, flush L2, dispatch (timed), experts, flush L2, combine (timed), wait (bounded).
  MoeSample run_once();
  // Every received token and every combined output of every rank against the host reference.
  void validate(moe::CheckReport& dispatch, moe::CheckReport& combine) const;

  const std::vector<moe::RankInputs>& inputs() const { return inputs_; }
  const GpuMoeOptions& options() const { return options_; }
  uint32_t qps() const;

 private:
  struct Rank;
  void open_rank(uint32_t r, const nic::QpAttributes& attributes);
  void connect();
  void open_proxies();
  void upload_handles();
  void preload_and_start();
  void check_failure(const char* phase) const;
  template <typename T>
  std::vector<T> read(const uint8_t* device, size_t count) const;

  GpuMoeOptions options_;
  moe::ArenaLayout layout_;
  uint32_t ctas_per_rank_ = 0;
  std::unique_ptr<softnic::SoftNic> nic_;
  std::vector<std::unique_ptr<Rank>> ranks_;
  std::vector<moe::RankInputs> inputs_;
  std::vector<moe::PeerWindow> peers_;
  moe::MoeRankHandle* handles_ = nullptr;  // device array, one per rank
  moe::PeerWindow* device_peers_ = nullptr;
  uint32_t* failure_ = nullptr;            // device word: the first non-ok Status of any warp
  uint8_t* flush_ = nullptr;
  std::vector<void*> device_memory_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t events_[4] = {};
  const void* dispatch_kernel_ = nullptr;  // the phase kernels for options_.transport
  const void* combine_kernel_ = nullptr;
  uint64_t epoch_ = 0;
  std::vector<std::unique_ptr<proxy::Proxy>> proxies_;  // mini-proxy: one per rank
};

}  // namespace dissect::bench::gpu
