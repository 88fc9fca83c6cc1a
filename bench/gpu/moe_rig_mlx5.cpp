// One rank per process on a ConnectX (moe_rig.h, --provider mlx5): the NIC opened through the mlx5
// provider, and the exchange through the bootstrap that connects every QP (moe/rank_offer.h).
// The arena and the QPs are made by open_rank as on the softnic: the provider puts a GPU arena in
// cudaMalloc memory and registers it with dma-buf (else nvidia-peermem), and creates GPU-resident
// QPs (DEVX, Route A) whose doorbell is the UAR mapped into the GPU or, with cpu_assisted, the
// provider's host forwarder (mlx5_provider.h).
#include <cuda_runtime.h>

#include <stdexcept>

#include "dissect/bootstrap/peer_info.h"
#include "dissect/common/cuda.h"
#include "dissect/moe/rank_offer.h"
#include "moe_rig.h"
#if defined(DISSECT_HAVE_MLX5)
#include "dissect/providers/mlx5/mlx5_provider.h"
#endif

namespace dissect::bench::gpu {

void GpuMoeRig::open_mlx5() {
  if (options_.mlx5.nic.empty()) {
    throw std::invalid_argument("moe: the mlx5 rig needs a device name (moe.cu chooses one before it opens the rig)");
  }
  check_cuda(cudaSetDevice(options_.device), "moe: cudaSetDevice");  // the provider's GPU memory goes here
#if defined(DISSECT_HAVE_MLX5)
  mlx5provider::Mlx5Options o;
  o.device = options_.mlx5.nic;
  o.gpu_ordinal = options_.device;
  o.local_rank = options_.group ? options_.group->local_rank() : 0;
  o.gid_index = options_.mlx5.gid_index;
  // Never a silent fallback: the UAR mapped into the GPU, or the forwarder when asked for.
  o.doorbell = options_.mlx5.cpu_assisted ? mlx5provider::DoorbellMode::cpu_assisted : mlx5provider::DoorbellMode::gpu;
  mlx5_ = mlx5provider::open_mlx5_nic(o);
#else
  throw std::invalid_argument("moe --provider mlx5: this dissect was built without rdma-core; configure with "
                              "-DDISSECT_WITH_MLX5=ON (libibverbs-dev, rdma-core 44+) and rebuild");
#endif
}

// Every rank offers its arena (address, rkey) and its QPs' endpoints; QP (r -> d, l) connects to
// d's QP (d -> r, l), its own to themselves (the HCA loops them back). The phase kernels start
// after preload_and_start's barrier, so no rank posts before every peer's QPs are in RTS.
void GpuMoeRig::exchange_and_connect_mlx5() {
  bootstrap::Bootstrap& group = *options_.group;
  const uint32_t me = first_rank_, ranks = options_.shape.ranks, local = qps_per_rank() / ranks;
  Rank& mine = *ranks_.at(0);
  char pci[32] = {};
  check_cuda(cudaDeviceGetPCIBusId(pci, sizeof pci - 1, options_.device), "moe: GPU PCI address");
  std::vector<nic::QpEndpoint> endpoints;
  for (auto& qp : mine.qps) endpoints.push_back(qp->endpoint());
  const moe::RankOffer offer =
      moe::make_rank_offer(me, mine.mr, bootstrap::host_name(), pci, options_.mlx5.nic, endpoints);
  const std::vector<moe::RankOffer> offers = moe::exchange_rank_offers(group, offer);
  gpus_.clear();
  nics_.clear();
  for (uint32_t d = 0; d < ranks; ++d) {
    const moe::RankOfferHead& peer = offers[d].head;
    gpus_.push_back(std::string(peer.host) + "/" + peer.gpu);  // nodes may repeat a PCI address
    nics_.push_back(std::string(peer.host) + ":" + peer.nic);
    peers_[d] = {peer.arena, peer.rkey};
    for (uint32_t l = 0; l < local; ++l) {
      mine.qps[d * local + l]->connect(moe::connect_target(offers, me, d, l, local));
    }
  }
}

}  // namespace dissect::bench::gpu
