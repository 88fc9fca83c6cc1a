// The MoE client on the softnic GPU engine, in either launch mode; the same kernels in both:
//
//  - one process: R ranks in this process on one GPU softnic, each rank with its PD, a GPU arena
//    registered once, and a QP per (destination rank, local expert) connected to the
//    destination's mirror QP (moe/handle.h). One kernel launch runs a phase of every rank at once
//    (blockIdx picks the rank), so all ranks start together and every warp the phase waits on is
//    resident: the kernel boundary is the barrier before each sample.
//  - one rank per process (GpuMoeOptions::group set, moe_rig_group.cu): this process holds rank
//    group->rank() on its own softnic, created with a CUDA IPC arena (softnic/ipc.h) that holds the
//    rank's arena, its GPU queues and the NIC tables. The processes exchange their IPC exports,
//    arena addresses, rkeys and QPNs through the bootstrap; each imports every peer's arena and
//    connects QP (r -> d, l) to d's QP (d -> r, l) through the import. The phase kernels are the
//    same, launched over this process's one rank; a bootstrap barrier precedes each sample.
//    Several processes may share one GPU (CUDA IPC works on one device); they then time-slice the
//    GPU (DESIGN.md), so their times measure the slicing too and the result says so.
//
// Transports: mini-gda (the warps build WQEs into GPU-resident QPs) or mini-proxy with GPU
// producers (the warps write descriptors into mapped host rings with the tuned handoff; each
// rank's Proxy has a CPU worker per destination rank, whose host-resident QP the GPU engine reads).
//
// The provider (GpuMoeOptions::provider): the softnic above, or mlx5 (moe_rig_mlx5.cpp): one rank
// per process only, each process on a ConnectX of its own through the mlx5 provider: its arena in
// GPU memory registered with the NIC (dma-buf, else nvidia-peermem), its QPs GPU-resident (DEVX),
// the endpoints (QPN, LID, GID), arena address and rkey exchanged through the bootstrap
// (moe/rank_offer.h). The same phase kernels, with system-scope release stores for the doorbell
// (the NIC and a CPU doorbell forwarder observe them outside the GPU). mini-gda only.
//
// Everything is allocated and every kernel loaded before the engine starts (gpu_engine.h HAZARDS).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dissect/bootstrap/bootstrap.h"
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

// The ConnectX of this process (--provider mlx5).
struct MoeMlx5Options {
  std::string nic;              // "mlx5_0"; empty: DISSECT_NIC, else the NIC nearest the GPU
  uint8_t gid_index = 0;        // the port's GID table index (RoCE v2: a RoCE v2 entry)
  bool cpu_assisted = false;    // doorbells through the provider's host forwarder, not the UAR
};

struct GpuMoeOptions {
  MoeTransportKind transport = MoeTransportKind::mini_gda;
  moe::MoeShape shape;
  moe::RoutingOptions routing;
  int device = 0;
  uint32_t warps_per_rank = 32;   // a phase's warps per rank (8 per CTA)
  uint32_t doorbell_batch = 4;    // DeepEP's kNumRequestInBatch (mini-proxy: the worker's chain)
  uint32_t engine_ctas = 16;
  uint32_t engine_warps_per_cta = 8;
  std::string nic_profile = "fast";  // softnic only
  std::string provider = "softnic";  // or "mlx5": one rank per process (group set), mini-gda
  MoeMlx5Options mlx5;               // mlx5.nic: the device name, chosen before the rig opens it
  uint64_t timeout_ns = 5'000'000'000ull;
  size_t l2_flush_bytes = 256u << 20;  // DeepEP's bench zeroes 256 MB between samples
  // Null: every rank in this process. Set: one rank per process, this one group->rank() of
  // group->world_size() == shape.ranks; the rig uses it for its exchanges and barriers.
  bootstrap::Bootstrap* group = nullptr;
};

// One sample: CUDA-event times of each phase and the in-kernel stamps of each rank this process
// holds (first_rank() + i).
struct MoeSample {
  double dispatch_us = 0, combine_us = 0;
  std::vector<moe::PhaseStamps> dispatch, combine;  // per rank of this process
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
  // Every received token and every combined output of every rank of this process against the host
  // reference.
  void validate(moe::CheckReport& dispatch, moe::CheckReport& combine) const;
  // One rank per process: the teardown order of softnic/ipc.h (stop, barrier, close the imports,
  // barrier), so that no peer's engine reaches this arena once it is freed. Call it on every rank
  // before destroying the rig; the destructor alone (an error path) stops without the barriers.
  void shut_down();
  // The effective SM clock, MHz: clock64 against globaltimer over 2 ms of one thread (several
  // processes on one GPU: a time slice inside the window counts as cycles of this context).
  double measure_sm_clock_mhz();

  // Every rank's inputs (each process computes them all from the seed: the reference needs them).
  const std::vector<moe::RankInputs>& inputs() const { return inputs_; }
  uint32_t first_rank() const { return first_rank_; }
  uint32_t local_ranks() const { return local_ranks_; }
  // The PCI address of every rank's GPU, entry r for rank r.
  const std::vector<std::string>& gpus() const { return gpus_; }
  // mlx5: every rank's "host:mlx5_X", entry r for rank r; empty on the softnic.
  const std::vector<std::string>& nics() const { return nics_; }
  const GpuMoeOptions& options() const { return options_; }
  uint32_t qps() const;           // of every rank (the launch's)
  uint32_t qps_per_rank() const;  // ranks x local experts (mini-gda) or ranks (mini-proxy)

 private:
  struct Rank {
    std::unique_ptr<nic::ProtectionDomain> pd;
    uint8_t* arena = nullptr;
    nic::MemoryRegion mr;
    std::vector<std::unique_ptr<nic::QueuePair>> qps;  // mini-gda: [ranks x L]; mini-proxy: [ranks]
    nic::QpHandle* device_qps = nullptr;
    proxy::RingHandle* device_rings = nullptr;         // mini-proxy: [ranks x L]
  };
  void open_nic();
  void open_rank(uint32_t r, const nic::QpAttributes& attributes);
  void connect();
  void exchange_and_connect();  // one rank per process (moe_rig_group.cu)
  bool on_mlx5() const { return mlx5_ != nullptr; }
  nic::Nic& nic() const;        // the softnic or the ConnectX
  void open_mlx5();             // moe_rig_mlx5.cpp
  void exchange_and_connect_mlx5();
  void wait_stream(const char* what) const;  // bounded (60 s), naming `what`
  size_t ipc_arena_bytes() const;
  void open_proxies();
  void upload_handles();
  void preload_and_start();
  void check_failure(const char* phase) const;
  template <typename T>
  std::vector<T> read(const uint8_t* device, size_t count) const;

  GpuMoeOptions options_;
  moe::ArenaLayout layout_;
  uint32_t ctas_per_rank_ = 0;
  uint32_t first_rank_ = 0, local_ranks_ = 0;  // the ranks this process holds
  bool shut_down_ = false;
  std::unique_ptr<softnic::SoftNic> nic_;     // the softnic, or null
  std::unique_ptr<nic::Nic> mlx5_;           // the ConnectX (--provider mlx5), or null
  std::vector<std::unique_ptr<Rank>> ranks_;  // this process's ranks
  std::vector<moe::RankInputs> inputs_;        // every rank's
  std::vector<moe::PeerWindow> peers_;         // every rank's window, as the NIC addresses it
  std::vector<std::string> gpus_;              // every rank's GPU (PCI address)
  std::vector<std::string> nics_;              // mlx5: every rank's node and NIC
  moe::MoeRankHandle* handles_ = nullptr;  // device array, one per rank of this process
  moe::PeerWindow* device_peers_ = nullptr;
  uint32_t* failure_ = nullptr;            // device word: the first non-ok Status of any warp
  uint8_t* flush_ = nullptr;
  std::vector<void*> device_memory_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t events_[4] = {};
  const void* dispatch_kernel_ = nullptr;  // the phase kernels for options_.transport
  const void* combine_kernel_ = nullptr;
  uint64_t epoch_ = 0;
  std::vector<std::unique_ptr<proxy::Proxy>> proxies_;  // mini-proxy: one per rank of this process
};

}  // namespace dissect::bench::gpu
