#include "dissect/bench/rank_fabric.h"

#include <cstdio>

#include "dissect/common/error.h"

namespace dissect::bench {
namespace {

// The fabric buffer is registered whole, so a PeerInfo's region length is the buffer in bytes.
size_t buffer_words(const bootstrap::PeerInfo& info) {
  return static_cast<size_t>(info.length / sizeof(uint64_t));
}

}  // namespace

RankFabric::RankFabric(bootstrap::Bootstrap& bootstrap, const NicOpener& open,
                       const std::string& device, const FabricConfig& config,
                       RankFabricLabels labels)
    : bootstrap_(bootstrap), rank_(bootstrap.rank()), labels_(std::move(labels)) {
  if (bootstrap.world_size() != 2) {
    throw InvalidArgument("a two-rank fabric needs exactly 2 ranks; this launch has " +
                          std::to_string(bootstrap.world_size()));
  }
  create_resources(open, config);
  exchange(device, config);
  connect();
  bootstrap_.barrier();
}

RankFabric::~RankFabric() {
  // QPs and the registration go before the PD, the PD before the NIC (nic.h's contract).
  qps_.clear();
  if (pd_ && region_.address) {
    try {
      pd_->deregister_memory(region_);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "rank %d: deregistering the fabric buffer: %s\n", rank_, e.what());
    }
  }
  pd_.reset();
  nic_.reset();
}

void RankFabric::create_resources(const NicOpener& open, const FabricConfig& config) {
  nic_ = open();
  pd_ = nic_->create_pd();
  nic::QpAttributes attributes;
  attributes.sq_wqebbs = config.sq_wqebbs;
  attributes.placement = nic::Placement::host;  // host threads are the submitters
  for (uint32_t i = 0; i < config.qps; ++i) qps_.push_back(pd_->create_qp(attributes));
  buffer_.assign(config.buffer_words, 0);
  region_ = pd_->register_memory(buffer_.data(), buffer_.size() * 8, nic::ACCESS_ALL);
}

void RankFabric::exchange(const std::string& device, const FabricConfig& config) {
  std::vector<nic::QpEndpoint> mine;
  for (const auto& qp : qps_) mine.push_back(qp->endpoint());
  const bootstrap::PeerInfo offer = bootstrap::make_peer_info(bootstrap_, mine, region_, device);
  const std::vector<bootstrap::PeerInfo> all = bootstrap::exchange_peer_info(bootstrap_, offer);
  for (int pe = 0; pe < 2; ++pe) peer_infos_[pe] = all[static_cast<size_t>(pe)];
  const bootstrap::PeerInfo& peer = peer_infos_[1 - rank_];
  const size_t peer_words = buffer_words(peer);
  if (peer.endpoint_count != config.qps || peer_words != config.buffer_words) {
    throw Error("rank " + std::to_string(peer.rank) + " offers " +
                std::to_string(peer.endpoint_count) + " QPs and " + std::to_string(peer_words) +
                " buffer words, rank " + std::to_string(rank_) + " made " +
                std::to_string(config.qps) + " and " + std::to_string(config.buffer_words) +
                ": launch both ranks with the same flags");
  }
}

void RankFabric::connect() {
  const bootstrap::PeerInfo& peer = peer_infos_[1 - rank_];
  const std::vector<nic::QpEndpoint> remote = bootstrap::offered_endpoints(peer);
  for (size_t i = 0; i < qps_.size(); ++i) qps_[i]->connect(remote[i]);
  for (const auto& qp : qps_) side_.qps.push_back(qp->handle());
  side_.buffer = buffer_.data();
  side_.words = buffer_.size();
  side_.lkey = region_.lkey;
  side_.peer = RemoteBuffer{peer.address, peer.rkey, buffer_words(peer)};
}

FabricSide& RankFabric::side(int pe) {
  if (pe != rank_) {
    throw Error("fabric: PE " + std::to_string(pe) + " is driven by rank " + std::to_string(pe) +
                ", not by this rank (" + std::to_string(rank_) + ")");
  }
  return side_;
}

void RankFabric::barrier() { bootstrap_.barrier(); }

uint64_t RankFabric::read_word(int pe, size_t index) {
  if (pe < 0 || pe > 1 || index >= buffer_.size()) {
    throw Error("fabric: read_word(PE " + std::to_string(pe) + ", word " + std::to_string(index) +
                ") is outside 2 PEs of " + std::to_string(buffer_.size()) + " words");
  }
  const uint64_t mine = __atomic_load_n(&buffer_[index], __ATOMIC_ACQUIRE);
  return bootstrap::allgather_value(bootstrap_, mine)[static_cast<size_t>(pe)];
}

void RankFabric::label(Result& r) const {
  r.provider = labels_.provider;
  r.nic_model = labels_.nic_model;
  r.engine = labels_.engine;
  const std::string device[2] = {peer_infos_[0].nic, peer_infos_[1].nic};
  const std::string host[2] = {peer_infos_[0].host, peer_infos_[1].host};
  r.pe_layout = "2 ranks, 1 PE each (" + bootstrap_.kind() + " bootstrap): rank 0 " + device[0] +
                " on " + host[0] + " measures, rank 1 " + device[1] + " on " + host[1] +
                " is the target";
  r.knobs.emplace_back("device", device[0]);
  r.knobs.emplace_back("peer_device", device[1]);
  r.knobs.emplace_back("ranks", "2");
}

}  // namespace dissect::bench
