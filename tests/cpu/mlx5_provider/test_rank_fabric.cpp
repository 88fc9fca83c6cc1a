// The two-rank fabric behind `dissect latency|rate --provider mlx5`, without a NIC: two ranks are
// two threads of an in-process bootstrap, and each rank's "NIC" is a SoftNic wrapped in recorders
// that log every control step. Pins the order of the control sequence, the refusals (world size,
// mismatched flags, another rank's PE) and a write across the ranks. The record the ranks exchange
// is bootstrap::PeerInfo; bootstrap_peer_info_test pins its wire format and its refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dissect/bench/rank_fabric.h"
#include "dissect/bootstrap/in_process.h"
#include "dissect/gda/gda.h"
#include "dissect/softnic/softnic.h"

namespace dissect::bench {
namespace {

using Log = std::vector<std::string>;

class RecordingQp : public nic::QueuePair {
 public:
  RecordingQp(std::unique_ptr<nic::QueuePair> inner, Log& log) : inner_(std::move(inner)), log_(log) {}
  uint32_t qpn() const override { return inner_->qpn(); }
  nic::QpHandle handle() const override { return inner_->handle(); }
  nic::RecvQueueHandle recv_handle() const override { return inner_->recv_handle(); }
  nic::QpEndpoint endpoint() const override { return inner_->endpoint(); }
  void connect(const nic::QpEndpoint& remote) override {
    log_.push_back("connect");
    inner_->connect(remote);
  }

 private:
  std::unique_ptr<nic::QueuePair> inner_;
  Log& log_;
};

class RecordingPd : public nic::ProtectionDomain {
 public:
  RecordingPd(std::unique_ptr<nic::ProtectionDomain> inner, Log& log)
      : inner_(std::move(inner)), log_(log) {}
  nic::MemoryRegion register_memory(void* address, size_t length, uint32_t access) override {
    log_.push_back("mr");
    return inner_->register_memory(address, length, access);
  }
  void deregister_memory(const nic::MemoryRegion& region) override {
    inner_->deregister_memory(region);
  }
  std::unique_ptr<nic::QueuePair> create_qp(const nic::QpAttributes& attributes) override {
    log_.push_back("qp");
    return std::make_unique<RecordingQp>(inner_->create_qp(attributes), log_);
  }

 private:
  std::unique_ptr<nic::ProtectionDomain> inner_;
  Log& log_;
};

class RecordingNic : public nic::Nic {
 public:
  explicit RecordingNic(Log& log) : log_(log) {}
  std::string provider() const override { return "recording-softnic"; }
  std::unique_ptr<nic::ProtectionDomain> create_pd() override {
    log_.push_back("pd");
    return std::make_unique<RecordingPd>(inner_.create_pd(), log_);
  }
  void* allocate(size_t bytes, nic::Placement placement) override {
    return inner_.allocate(bytes, placement);
  }
  void release(void* address) override { inner_.release(address); }

 private:
  softnic::SoftNic inner_;
  Log& log_;
};

// Logs the collectives: the first allgather is the endpoint exchange.
class RecordingBootstrap : public bootstrap::Bootstrap {
 public:
  RecordingBootstrap(bootstrap::Bootstrap& inner, Log& log) : inner_(inner), log_(log) {}
  int rank() const override { return inner_.rank(); }
  int world_size() const override { return inner_.world_size(); }
  int local_rank() const override { return inner_.local_rank(); }
  int local_size() const override { return inner_.local_size(); }
  std::string kind() const override { return inner_.kind(); }
  std::vector<uint8_t> allgather(const void* data, size_t bytes) override {
    log_.push_back(exchanged_ ? "allgather" : "exchange");
    exchanged_ = true;
    return inner_.allgather(data, bytes);
  }
  void barrier() override {
    log_.push_back("barrier");
    inner_.barrier();
  }
  void broadcast(void* data, size_t bytes, int root) override {
    inner_.broadcast(data, bytes, root);
  }

 private:
  bootstrap::Bootstrap& inner_;
  Log& log_;
  bool exchanged_ = false;
};

RankFabricLabels test_labels() { return {"recording-softnic", "a SoftNic per rank", "softnic"}; }

// Runs `body(rank, bootstrap, log)` on two threads, one per rank; rethrows nothing: each rank's
// exception text lands in errors[rank].
void on_two_ranks(const std::function<void(int, bootstrap::Bootstrap&, Log&)>& body, Log logs[2],
                  std::string errors[2]) {
  auto pes = bootstrap::InProcessGroup::create(2, 20);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      RecordingBootstrap recording(*pes[r], logs[r]);
      try {
        body(r, recording, logs[r]);
      } catch (const std::exception& e) {
        errors[r] = e.what();
      }
    });
  }
  for (auto& t : ranks) t.join();
}

NicOpener recording_opener(Log& log) {
  return [&log] {
    log.push_back("open");
    return std::make_unique<RecordingNic>(log);
  };
}

TEST(RankFabric, ControlSequenceIsOpenPdQpMrExchangeConnectBarrier) {
  Log logs[2];
  std::string errors[2];
  on_two_ranks(
      [](int, bootstrap::Bootstrap& b, Log& log) {
        RankFabric fabric(b, recording_opener(log), "fake0", FabricConfig{2, 64, 64},
                          test_labels());
      },
      logs, errors);
  const Log expected = {"open", "pd", "qp", "qp", "mr", "exchange", "connect", "connect", "barrier"};
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(errors[r], "") << "rank " << r;
    EXPECT_EQ(logs[r], expected) << "rank " << r;
  }
}

TEST(RankFabric, WriteFromRankZeroLandsOnRankOneAndBothReadIt) {
  Log logs[2];
  std::string errors[2];
  uint64_t seen[2] = {0, 0};
  on_two_ranks(
      [&](int rank, bootstrap::Bootstrap& b, Log& log) {
        RankFabric fabric(b, recording_opener(log), "fake" + std::to_string(rank),
                          FabricConfig{1, 64, 64}, test_labels());
        EXPECT_TRUE(fabric.drives(rank));
        EXPECT_FALSE(fabric.drives(1 - rank));
        EXPECT_THROW(fabric.side(1 - rank), Error);
        if (rank == 0) {
          FabricSide& me = fabric.side(0);
          EXPECT_EQ(me.peer.words, 64u);
          const uint64_t value = 0x5eed;
          gda::InlineWriteRequest r{&value, 8, me.peer.address + 8 * 3, me.peer.rkey};
          uint64_t end = 0;
          using P = gda::ordering::system_release_store;
          ASSERT_EQ((gda::put_inline<P, gda::Sharing::exclusive>(me.qps[0], r,
                                                                  gda::Completion::signaled, &end)),
                    gda::Status::ok);
          ASSERT_EQ((gda::wait_completion<P, gda::Sharing::exclusive>(me.qps[0], end)),
                    gda::Status::ok);
        }
        fabric.barrier();
        seen[rank] = fabric.read_word(1, 3);
        if (rank == 0) {
          Result result;
          fabric.label(result);
          EXPECT_EQ(result.provider, "recording-softnic");
          EXPECT_NE(result.pe_layout.find("rank 0 fake0"), std::string::npos) << result.pe_layout;
          EXPECT_NE(result.pe_layout.find("rank 1 fake1"), std::string::npos) << result.pe_layout;
          ASSERT_GE(result.knobs.size(), 2u);
          EXPECT_EQ(result.knobs[0], (std::pair<std::string, std::string>{"device", "fake0"}));
          EXPECT_EQ(result.knobs[1], (std::pair<std::string, std::string>{"peer_device", "fake1"}));
        }
      },
      logs, errors);
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
  EXPECT_EQ(seen[0], 0x5eedu);
  EXPECT_EQ(seen[1], 0x5eedu);
}

TEST(RankFabric, RanksLaunchedWithOtherFlagsRefuseEachOther) {
  Log logs[2];
  std::string errors[2];
  on_two_ranks(
      [](int rank, bootstrap::Bootstrap& b, Log& log) {
        RankFabric fabric(b, recording_opener(log), "fake", FabricConfig{rank == 0 ? 1u : 4u, 64, 64},
                          test_labels());
      },
      logs, errors);
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE(errors[r].find("launch both ranks with the same flags"), std::string::npos)
        << "rank " << r << ": " << errors[r];
    // Nothing was connected with a mismatched peer.
    EXPECT_EQ(std::count(logs[r].begin(), logs[r].end(), "connect"), 0) << "rank " << r;
  }
}

TEST(RankFabric, OneRankIsRefusedBeforeAnythingIsOpened) {
  auto pes = bootstrap::InProcessGroup::create(1, 5);
  Log log;
  try {
    RankFabric fabric(*pes[0], recording_opener(log), "fake", FabricConfig{}, test_labels());
    FAIL() << "a one-rank fabric was created";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("exactly 2 ranks; this launch has 1"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(log.empty());
}

}  // namespace
}  // namespace dissect::bench
