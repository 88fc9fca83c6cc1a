// The in-process fabric: both PEs over one SoftNic, built exactly as the experiments built it
// before there was a choice of fabric (LoopbackFabric), so softnic numbers do not move.
#include "softnic_fabric.h"

#include "dissect/bench/loopback_fabric.h"
#include "dissect/common/error.h"

namespace dissect::bench {
namespace {

class SoftnicFabric : public Fabric {
 public:
  explicit SoftnicFabric(const FabricConfig& c) : loop_(c.qps, c.buffer_words, c.sq_wqebbs) {
    // PE 0 owns the senders and the source buffer, PE 1 the receivers and the destination.
    fill(sides_[0], loop_.senders, loop_.source, loop_.source_region, loop_.destination_region);
    fill(sides_[1], loop_.receivers, loop_.destination, loop_.destination_region,
         loop_.source_region);
  }

  bool drives(int pe) const override { return pe == 0 || pe == 1; }
  FabricSide& side(int pe) override {
    if (!drives(pe)) throw Error("softnic fabric: there is no PE " + std::to_string(pe));
    return sides_[pe];
  }
  void barrier() override {}
  uint64_t read_word(int pe, size_t index) override {
    const FabricSide& s = side(pe);
    if (index >= s.words) {
      throw Error("softnic fabric: word " + std::to_string(index) + " is past PE " +
                  std::to_string(pe) + "'s " + std::to_string(s.words) + " words");
    }
    return __atomic_load_n(&s.buffer[index], __ATOMIC_ACQUIRE);
  }
  void label(Result& r) const override {
    r.provider = "softnic";
    r.nic_model = SOFTNIC_MODEL;
    r.engine = softnic::to_string(softnic::EngineKind::host_thread);
    r.pe_layout = "2 PEs, 1 process, 1 softnic";
  }

 private:
  static void fill(FabricSide& side, const std::vector<std::unique_ptr<nic::QueuePair>>& qps,
                   std::vector<uint64_t>& buffer, const nic::MemoryRegion& mine,
                   const nic::MemoryRegion& peer) {
    for (const auto& qp : qps) side.qps.push_back(qp->handle());
    side.buffer = buffer.data();
    side.words = buffer.size();
    side.lkey = mine.lkey;
    side.peer = RemoteBuffer{reinterpret_cast<uintptr_t>(peer.address), peer.rkey, peer.length / 8};
  }

  LoopbackFabric loop_;
  FabricSide sides_[2];
};

class SoftnicSession : public FabricSession {
 public:
  std::unique_ptr<Fabric> connect(const FabricConfig& config) override {
    return std::make_unique<SoftnicFabric>(config);
  }
  bool measures() const override { return true; }
  std::string served_line(const std::string&) const override { return ""; }
};

}  // namespace

std::unique_ptr<FabricSession> open_softnic_session() { return std::make_unique<SoftnicSession>(); }

}  // namespace dissect::bench
