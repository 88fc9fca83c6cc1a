#include "dissect/bench/rank_fabric.h"

#include <cstdio>

#include "dissect/bootstrap/peer_info.h"
#include "dissect/common/error.h"

namespace dissect::bench {

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
  FabricEndpoints mine;
  mine.rank = rank_;
  mine.host = bootstrap::host_name();
  mine.device = device;
  for (const auto& qp : qps_) mine.qps.push_back(qp->endpoint());
  mine.buffer = RemoteBuffer{reinterpret_cast<uintptr_t>(buffer_.data()), region_.rkey,
                             buffer_.size()};
  const std::vector<FabricWire> all = bootstrap::allgather_value(bootstrap_, encode(mine));
  for (int pe = 0; pe < 2; ++pe) endpoints_[pe] = decode(all[pe], pe);
  const FabricEndpoints& peer = endpoints_[1 - rank_];
  if (peer.qps.size() != config.qps || peer.buffer.words != config.buffer_words) {
    throw Error("rank " + std::to_string(peer.rank) + " offers " +
                std::to_string(peer.qps.size()) + " QPs and " + std::to_string(peer.buffer.words) +
                " buffer words, rank " + std::to_string(rank_) + " made " +
                std::to_string(config.qps) + " and " + std::to_string(config.buffer_words) +
                ": launch both ranks with the same flags");
  }
}

void RankFabric::connect() {
  const FabricEndpoints& peer = endpoints_[1 - rank_];
  for (size_t i = 0; i < qps_.size(); ++i) qps_[i]->connect(peer.qps[i]);
  for (const auto& qp : qps_) side_.qps.push_back(qp->handle());
  side_.buffer = buffer_.data();
  side_.words = buffer_.size();
  side_.lkey = region_.lkey;
  side_.peer = peer.buffer;
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
  const FabricEndpoints& a = endpoints_[0];
  const FabricEndpoints& b = endpoints_[1];
  r.pe_layout = "2 ranks, 1 PE each (" + bootstrap_.kind() + " bootstrap): rank 0 " + a.device +
                " on " + a.host + " measures, rank 1 " + b.device + " on " + b.host +
                " is the target";
  r.knobs.emplace_back("device", a.device);
  r.knobs.emplace_back("peer_device", b.device);
  r.knobs.emplace_back("ranks", "2");
}

}  // namespace dissect::bench
