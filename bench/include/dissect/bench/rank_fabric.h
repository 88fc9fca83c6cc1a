// The two-rank fabric (fabric.h): one PE per process, found through the bootstrap, on whichever NIC
// `open` returns (mlx5 on a cluster; any nic::Nic in tests). Provider-neutral: everything it does
// goes through the nic and bootstrap interfaces.
//
// Control sequence, the same on both ranks and in this order (rank_fabric_test pins it):
//   open the NIC -> create the PD -> create `qps` host-resident RC QPs -> register the buffer ->
//   exchange endpoints (one allgather of bootstrap::PeerInfo) -> connect QP i to the peer's QP i
//   (RESET -> INIT -> RTR -> RTS) -> barrier.
// The closing barrier is there because an RC requester must not send before the responder's QP
// has reached RTR: without it the first write could meet a QP in RESET and be NAKed.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dissect/bench/fabric.h"
#include "dissect/bootstrap/bootstrap.h"
#include "dissect/bootstrap/peer_info.h"

namespace dissect::bench {

using NicOpener = std::function<std::unique_ptr<nic::Nic>()>;

// How results on this fabric are labelled (Result fields of the same names).
struct RankFabricLabels {
  std::string provider;   // "mlx5"
  std::string nic_model;  // what consumed the WQEs, in words
  std::string engine;     // "ConnectX"
};

class RankFabric : public Fabric {
 public:
  // Runs the whole control sequence; returns connected. Throws InvalidArgument unless the
  // bootstrap has exactly two ranks; errors of the NIC or the peer propagate with their context.
  RankFabric(bootstrap::Bootstrap& bootstrap, const NicOpener& open, const std::string& device,
             const FabricConfig& config, RankFabricLabels labels);
  ~RankFabric() override;

  bool drives(int pe) const override { return pe == rank_; }
  FabricSide& side(int pe) override;
  void barrier() override;
  uint64_t read_word(int pe, size_t index) override;
  void label(Result& result) const override;

  // What rank `pe` offered in the exchange (its host, NIC, QP endpoints and buffer).
  const bootstrap::PeerInfo& peer_info(int pe) const { return peer_infos_[pe]; }

 private:
  void create_resources(const NicOpener& open, const FabricConfig& config);
  void exchange(const std::string& device, const FabricConfig& config);
  void connect();

  bootstrap::Bootstrap& bootstrap_;
  int rank_;
  RankFabricLabels labels_;
  std::unique_ptr<nic::Nic> nic_;
  std::unique_ptr<nic::ProtectionDomain> pd_;
  std::vector<std::unique_ptr<nic::QueuePair>> qps_;
  std::vector<uint64_t> buffer_;
  nic::MemoryRegion region_;
  bootstrap::PeerInfo peer_infos_[2];
  FabricSide side_;
};

}  // namespace dissect::bench
