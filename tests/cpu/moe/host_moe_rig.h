// Test support: several MoE ranks on one softnic with the host-thread engine. Each rank has its
// PD and one arena in host memory registered once. mini-gda: a QP per (destination rank, local
// expert) connected to the mirror QP of the destination (moe/handle.h). mini-proxy: a Proxy per
// rank whose worker d owns a QP connected to rank d's worker for this rank, and a ring per
// (destination, local expert) (moe/transport_proxy.h). Host threads stand in for the warps of
// every rank and run the same dispatch/combine bodies the GPU runs.
#pragma once

#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "dissect/gda/ordering.h"
#include "dissect/moe/combine.h"
#include "dissect/moe/dispatch.h"
#include "dissect/moe/reference.h"
#include "dissect/moe/transport_gda.h"
#include "dissect/moe/transport_proxy.h"
#include "dissect/proxy/proxy.h"
#include "dissect/nic/nic.h"
#include "dissect/softnic/softnic.h"

namespace dissect::testing {

// System-scope release stores: the engine is a host thread, outside any GPU scope.
using MoeTransport = moe::GdaTransport<gda::ordering::system_release_store>;
enum class MoeTransportKind { mini_gda, mini_proxy };

struct HostMoeRank {
  std::unique_ptr<nic::ProtectionDomain> pd;
  uint8_t* arena = nullptr;
  nic::MemoryRegion mr;
  std::vector<std::unique_ptr<nic::QueuePair>> qps;  // [ranks x local_experts]
  std::vector<nic::QpHandle> handles;
  std::unique_ptr<proxy::Proxy> proxy;       // mini-proxy only
  std::vector<proxy::RingHandle> rings;      // [ranks x local_experts]
  moe::MoeRankHandle handle{};
};

class HostMoeRig {
 public:
  HostMoeRig(const moe::MoeShape& shape, const moe::RoutingOptions& routing, uint32_t sq_wqebbs = 0,
             MoeTransportKind kind = MoeTransportKind::mini_gda)
      : shape_(shape), layout_(moe::arena_layout(shape)), kind_(kind) {
    softnic::SoftNicOptions o;
    o.engine_threads = 2;
    nic_ = std::make_unique<softnic::SoftNic>(o);
    ranks_.resize(shape.ranks);
    nic::QpAttributes a;
    a.sq_wqebbs = sq_wqebbs ? sq_wqebbs : moe::required_sq_wqebbs(shape);
    for (uint32_t r = 0; r < shape.ranks; ++r) open_rank(r, a, routing);
    connect();
    if (kind == MoeTransportKind::mini_proxy) start_proxies();
    for (HostMoeRank& r : ranks_) {
      r.handle.peers = peers_.data();
      r.handle.qps = r.handles.data();
      r.handle.rings = r.rings.data();
    }
  }
  ~HostMoeRig() {
    for (HostMoeRank& r : ranks_) r.proxy.reset();  // stops the workers before their QPs go
    for (HostMoeRank& r : ranks_) r.qps.clear();
    for (HostMoeRank& r : ranks_) r.pd.reset();
    nic_.reset();
    for (HostMoeRank& r : ranks_) std::free(r.arena);
  }

  // One dispatch, the experts, one combine, `warps` host threads per rank in each step, on the
  // rig's transport. Returns the first failure any thread met.
  gda::Status run_once(uint32_t warps) {
    return kind_ == MoeTransportKind::mini_gda ? run_once<MoeTransport>(warps)
                                               : run_once<moe::ProxyTransport>(warps);
  }

  template <typename Transport>
  gda::Status run_once(uint32_t warps) {
    ++epoch_;
    for (HostMoeRank& r : ranks_) {
      moe::reset_dispatch(moe::HostWarp{}, r.handle);
      std::memset(r.arena + layout_.stamps, 0, moe::STAMP_BYTES);
    }
    gda::Status worst = on_threads(warps, [](const moe::MoeRankHandle& h, uint32_t w, uint32_t n) {
      return moe::dispatch<Transport>(moe::HostWarp{}, h, w, n, stamps_of(h, moe::dispatch_phase));
    });
    if (worst != gda::Status::ok) return worst;
    on_threads(warps, [](const moe::MoeRankHandle& h, uint32_t w, uint32_t n) {
      moe::run_experts(moe::HostWarp{}, h, w, n);
      return gda::Status::ok;
    });
    const uint64_t epoch = epoch_;
    return on_threads(warps, [epoch](const moe::MoeRankHandle& h, uint32_t w, uint32_t n) {
      return moe::combine<Transport>(moe::HostWarp{}, h, w, n, epoch, stamps_of(h, moe::combine_phase));
    });
  }

  // The in-kernel stamps of rank r's last run (in its arena, as on the GPU).
  moe::PhaseStamps stamps(uint32_t r, moe::Phase phase) const {
    moe::PhaseStamps out;
    std::memcpy(&out, ranks_[r].arena + layout_.stamps + phase * sizeof(moe::PhaseStamps), sizeof out);
    return out;
  }

  moe::DispatchView dispatch_view(uint32_t r) const {
    const uint8_t* a = ranks_[r].arena;
    return {a + layout_.packed_x, reinterpret_cast<const float*>(a + layout_.packed_scales),
            reinterpret_cast<const int32_t*>(a + layout_.packed_src_info),
            reinterpret_cast<const uint64_t*>(a + layout_.packed_layout_range),
            reinterpret_cast<const uint32_t*>(a + layout_.packed_count)};
  }
  const uint16_t* combined(uint32_t r) const {
    return reinterpret_cast<const uint16_t*>(ranks_[r].arena + layout_.combined_x);
  }
  uint8_t* arena(uint32_t r) { return ranks_[r].arena; }
  const std::vector<moe::RankInputs>& inputs() const { return inputs_; }
  moe::MoeRankHandle& handle(uint32_t r) { return ranks_[r].handle; }
  const moe::ArenaLayout& layout() const { return layout_; }
  softnic::SoftNic& nic() { return *nic_; }
  const HostMoeRank& rank(uint32_t r) const { return ranks_[r]; }

 private:
  void open_rank(uint32_t r, const nic::QpAttributes& a, const moe::RoutingOptions& routing) {
    HostMoeRank& rank = ranks_[r];
    rank.pd = nic_->create_pd();
    rank.arena = static_cast<uint8_t*>(std::aligned_alloc(4096, (layout_.bytes + 4095) & ~4095ull));
    std::memset(rank.arena, 0, layout_.bytes);
    rank.mr = rank.pd->register_memory(rank.arena, layout_.bytes, nic::ACCESS_ALL);
    // mini-gda: a QP per (destination, local expert); mini-proxy: one per destination (a worker's).
    const uint32_t qps = shape_.ranks * (kind_ == MoeTransportKind::mini_gda ? moe::local_experts(shape_) : 1);
    for (uint32_t q = 0; q < qps; ++q) rank.qps.push_back(rank.pd->create_qp(a));
    inputs_.push_back(moe::make_inputs(shape_, routing, r));
    const moe::RankInputs& in = inputs_.back();
    std::memcpy(rank.arena + layout_.x, in.x.data(), in.x.size() * 2);
    std::memcpy(rank.arena + layout_.topk_idx, in.topk_idx.data(), in.topk_idx.size() * 4);
    std::memcpy(rank.arena + layout_.topk_weights, in.topk_weights.data(), in.topk_weights.size() * 4);
    peers_.push_back({reinterpret_cast<uint64_t>(rank.arena), rank.mr.rkey});
    rank.handle = moe::MoeRankHandle{shape_, layout_, r, rank.arena, rank.mr.lkey, nullptr, nullptr,
                                     nullptr, 4, 20'000'000'000ull};
  }

  // QP (r -> d, l) to QP (d -> r, l); each QP connects once, a rank's own QPs to themselves.
  void connect() {
    const uint32_t local = kind_ == MoeTransportKind::mini_gda ? moe::local_experts(shape_) : 1;
    for (uint32_t r = 0; r < shape_.ranks; ++r) {
      for (uint32_t d = 0; d < shape_.ranks; ++d) {
        for (uint32_t l = 0; l < local; ++l) {
          ranks_[r].qps[d * local + l]->connect(ranks_[d].qps[r * local + l]->endpoint());
        }
      }
    }
    for (HostMoeRank& rank : ranks_) {
      for (auto& qp : rank.qps) rank.handles.push_back(qp->handle());
    }
  }

  // Rank r's proxy: worker d on QP (r -> d), window d = r's arena -> d's arena, ring l x ranks + d
  // (served by worker d) for channel (d, l).
  void start_proxies() {
    const uint32_t local = moe::local_experts(shape_);
    for (uint32_t r = 0; r < shape_.ranks; ++r) {
      HostMoeRank& rank = ranks_[r];
      proxy::ProxyConfig c;
      c.workers = shape_.ranks;
      c.rings = shape_.ranks * local;
      c.ring_entries = 256;
      c.batch = 4;
      c.pin = false;
      std::vector<proxy::Window> windows;
      for (uint32_t d = 0; d < shape_.ranks; ++d) {
        windows.push_back({peers_[r].base, rank.mr.lkey, peers_[d].base, peers_[d].rkey});
      }
      rank.proxy = std::make_unique<proxy::Proxy>(c, rank.handles, windows);
      rank.proxy->start();
      for (uint32_t d = 0; d < shape_.ranks; ++d) {
        for (uint32_t l = 0; l < local; ++l) rank.rings.push_back(rank.proxy->ring(l * shape_.ranks + d));
      }
    }
  }

  static moe::PhaseStamps* stamps_of(const moe::MoeRankHandle& h, moe::Phase phase) {
    return moe::region<moe::PhaseStamps>(h, h.layout.stamps) + phase;
  }

  template <typename Body>
  gda::Status on_threads(uint32_t warps, Body body) {
    std::vector<std::thread> threads;
    std::vector<gda::Status> status(shape_.ranks * warps, gda::Status::ok);
    for (uint32_t r = 0; r < shape_.ranks; ++r) {
      for (uint32_t w = 0; w < warps; ++w) {
        threads.emplace_back([&, r, w] { status[r * warps + w] = body(ranks_[r].handle, w, warps); });
      }
    }
    for (auto& t : threads) t.join();
    for (gda::Status s : status) {
      if (s != gda::Status::ok) return s;
    }
    return gda::Status::ok;
  }

  moe::MoeShape shape_;
  moe::ArenaLayout layout_;
  std::unique_ptr<softnic::SoftNic> nic_;
  std::vector<HostMoeRank> ranks_;
  std::vector<moe::PeerWindow> peers_;
  std::vector<moe::RankInputs> inputs_;
  uint64_t epoch_ = 0;
  MoeTransportKind kind_;
};

}  // namespace dissect::testing
