// One rank per process (moe_rig.h): the exchange through the bootstrap, the cross-process
// connections through each peer's CUDA IPC arena, and the teardown order of softnic/ipc.h.
#include <cuda_runtime.h>

#include <cstring>
#include <stdexcept>

#include "dissect/common/cuda.h"
#include "dissect/common/error.h"
#include "moe_rig.h"

namespace dissect::bench::gpu {
namespace {

// What one rank tells every other before they connect (its QPNs follow in a second allgather).
struct RankOffer {
  softnic::IpcExport nic;
  uint64_t arena = 0;     // the rank's arena, in its owner's address space (a raddr for peers)
  uint32_t rkey = 0;
  uint32_t rank = 0;
  char gpu[32] = {};      // the GPU's PCI address, for the result's layout
};
static_assert(std::is_trivially_copyable_v<RankOffer>);

}  // namespace

// The rank's arena, its GPU queues (send queue, CQ, doorbell record: a few pages each) and the
// NIC tables, with room to spare: an arena too small fails by name at allocate (ipc_arena.h).
size_t GpuMoeRig::ipc_arena_bytes() const {
  const size_t queue = size_t{moe::required_sq_wqebbs(options_.shape)} * 64 + (64u << 10);
  return layout_.bytes + size_t{qps_per_rank()} * queue + (64u << 20);
}

// Step 2 and 3 of softnic/ipc.h's protocol: allgather the offers and the QPNs, import every
// peer's arena, connect QP (r -> d, l) to d's QP (d -> r, l) through d's import (to itself for
// d == r). The engines start after a barrier (preload_and_start).
void GpuMoeRig::exchange_and_connect() {
  bootstrap::Bootstrap& group = *options_.group;
  const uint32_t me = first_rank_, ranks = options_.shape.ranks, local = qps_per_rank() / ranks;
  Rank& mine = *ranks_.at(0);
  RankOffer offer;
  offer.nic = nic_->ipc_export();
  offer.arena = reinterpret_cast<uintptr_t>(mine.arena);
  offer.rkey = mine.mr.rkey;
  offer.rank = me;
  check_cuda(cudaDeviceGetPCIBusId(offer.gpu, sizeof offer.gpu - 1, options_.device), "moe: GPU PCI address");
  const std::vector<RankOffer> offers = bootstrap::allgather_value(group, offer);
  std::vector<uint32_t> my_qpns;
  for (auto& qp : mine.qps) my_qpns.push_back(qp->qpn());
  const std::vector<uint8_t> all_qpns = group.allgather(my_qpns.data(), my_qpns.size() * 4);
  gpus_.clear();
  for (uint32_t d = 0; d < ranks; ++d) {
    const RankOffer& peer = offers[d];
    if (peer.rank != d) {
      throw Error("moe rank " + std::to_string(me) + ": entry " + std::to_string(d) +
                  " of the exchange says rank " + std::to_string(peer.rank));
    }
    gpus_.push_back(std::string(peer.gpu, strnlen(peer.gpu, sizeof peer.gpu)));
    peers_[d] = {peer.arena, peer.rkey};
    const uint32_t alias = d == me ? 0 : nic_->import_peer(peer.nic);
    for (uint32_t l = 0; l < local; ++l) {
      nic::QueuePair& qp = *mine.qps[d * local + l];
      if (d == me) {
        qp.connect(mine.qps[me * local + l]->endpoint());
        continue;
      }
      nic::QpEndpoint endpoint;
      std::memcpy(&endpoint.qpn, all_qpns.data() + (size_t{d} * my_qpns.size() + me * local + l) * 4, 4);
      endpoint.nic_id = alias;
      qp.connect(endpoint);
    }
  }
}

// softnic/ipc.h step 4: no engine runs when a mapping closes, and no arena is freed while a peer
// still has it mapped.
void GpuMoeRig::shut_down() {
  if (shut_down_) return;
  shut_down_ = true;
  for (auto& p : proxies_) p->stop(proxy::StopMode::abandon);
  if (nic_) nic_->stop();
  if (options_.group == nullptr) return;
  options_.group->barrier();
  if (nic_) nic_->close_imports();  // mlx5: the barrier alone (no peer writes to this arena after it)
  options_.group->barrier();
}

}  // namespace dissect::bench::gpu
