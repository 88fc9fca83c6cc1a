// A worker serving many rings gives each its turn at the send queue: a ring whose producer keeps
// it full cannot starve the rings after it (round robin from where room ran out, worker.cpp).
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "dissect/common/atomic.h"
#include "dissect/proxy/handoff.h"
#include "dissect/proxy/poster.h"
#include "dissect/proxy/proxy.h"

namespace proxy = dissect::proxy;
using dissect::Scope;

namespace {

constexpr uint32_t kRoom = 16;  // = batch: one chain fills the send queue
constexpr uint64_t kRemoteBase = 1ull << 40;

// A send queue of kRoom requests that completes everything at the next poll, and logs which
// remote offset each chain began with (offset / 8 = the ring that posted it, below).
class RecordingPoster final : public proxy::Poster {
 public:
  explicit RecordingPoster(std::vector<uint64_t>* log) : log_(log) {}
  std::string describe() const override { return "recording poster"; }
  uint32_t room() const override { return static_cast<uint32_t>(kRoom - (posted_ - retired_)); }
  bool supports(proxy::Operation) const override { return true; }
  uint64_t post(const proxy::PostItem* items, uint32_t count) override {
    log_->push_back((items[0].remote_address - kRemoteBase) / 8);
    return posted_ += count;
  }
  uint64_t poll() override { return retired_ = posted_; }
  uint32_t error() const override { return 0; }

 private:
  std::vector<uint64_t>* log_;
  uint64_t posted_ = 0, retired_ = 0;
};

proxy::Request to_ring(uint32_t r) { return proxy::Request{proxy::Operation::write, 0, 8, 0, uint64_t{r} * 8}; }

bool wait_completed(const proxy::RingHandle& ring, uint64_t n) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (dissect::load_acquire<Scope::system>(ring.completed) < n) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace

TEST(Fairness, FullRingDoesNotStarveTheRingsAfterIt) {
  proxy::ProxyConfig config;
  config.workers = 1;
  config.rings = 3;
  config.batch = kRoom;
  config.ring_entries = 1024;
  config.pin = false;
  std::vector<uint64_t> log;
  std::vector<std::unique_ptr<proxy::Poster>> posters;
  posters.push_back(std::make_unique<RecordingPoster>(&log));
  proxy::Proxy p(config, std::move(posters), {proxy::Window{0x1000, 1, kRemoteBase, 2}});
  // Ring 0 holds 62 chains' worth before the worker starts; rings 1 and 2 one descriptor each.
  uint64_t index = 0;
  for (uint32_t k = 0; k < 1000; ++k) ASSERT_EQ(proxy::enqueue<proxy::tuned>(p.ring(0), to_ring(0), &index), proxy::Status::ok);
  ASSERT_EQ(proxy::enqueue<proxy::tuned>(p.ring(1), to_ring(1), &index), proxy::Status::ok);
  ASSERT_EQ(proxy::enqueue<proxy::tuned>(p.ring(2), to_ring(2), &index), proxy::Status::ok);
  p.start();
  ASSERT_TRUE(wait_completed(p.host_view(0), 1000));
  ASSERT_TRUE(wait_completed(p.host_view(1), 1));
  ASSERT_TRUE(wait_completed(p.host_view(2), 1));
  const proxy::ShutdownReport report = p.stop(proxy::StopMode::drain);
  EXPECT_TRUE(report.drained) << report.describe();
  // Each pass has room for one chain: ring 0, then ring 1, then ring 2, then ring 0 again. A
  // worker that started every pass at ring 0 posted ring 0's 63 chains first.
  ASSERT_GE(log.size(), 3u);
  EXPECT_EQ(log[0], 0u);
  EXPECT_EQ(log[1], 1u);
  EXPECT_EQ(log[2], 2u);
  EXPECT_EQ(log.size(), 63u + 2u);  // ceil(1000 / 16) chains of ring 0 and one each of 1 and 2
}

// A pass that ends with the send queue full counts as waiting for the NIC (WorkerStats::full_passes),
// which is how the experiments tell a slow NIC model from slow producers when every chain is
// already as long as B allows. Here the queue never completes: once the first chain filled it,
// every pass ends full; with a queue that completes at once and no descriptors, none does.
TEST(Fairness, PassesThatEndWithTheSendQueueFullAreCounted) {
  class NeverCompletes final : public proxy::Poster {
   public:
    std::string describe() const override { return "a send queue that never completes"; }
    uint32_t room() const override { return static_cast<uint32_t>(kRoom - posted_); }
    bool supports(proxy::Operation) const override { return true; }
    uint64_t post(const proxy::PostItem*, uint32_t count) override { return posted_ += count; }
    uint64_t poll() override { return 0; }
    uint32_t error() const override { return 0; }

   private:
    uint64_t posted_ = 0;
  };
  for (bool stalled : {true, false}) {
    proxy::ProxyConfig config;
    config.workers = 1;
    config.rings = 1;
    config.batch = kRoom;
    config.pin = false;
    std::vector<uint64_t> log;
    std::vector<std::unique_ptr<proxy::Poster>> posters;
    if (stalled) posters.push_back(std::make_unique<NeverCompletes>());
    else posters.push_back(std::make_unique<RecordingPoster>(&log));
    proxy::Proxy p(config, std::move(posters), {proxy::Window{0x1000, 1, kRemoteBase, 2}});
    uint64_t index = 0;
    if (stalled) {
      for (uint32_t k = 0; k < kRoom; ++k) ASSERT_EQ(proxy::enqueue<proxy::tuned>(p.ring(0), to_ring(0), &index), proxy::Status::ok);
    }
    p.start();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (p.stats()[0].passes < 1000 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    p.stop(proxy::StopMode::abandon);
    const proxy::WorkerStats s = p.stats()[0];
    ASSERT_GE(s.passes, 1000u);
    if (stalled) {
      EXPECT_EQ(s.descriptors, kRoom);
      EXPECT_GE(s.full_passes + 1, s.passes) << "every pass after the first post found the queue full";
    } else {
      EXPECT_EQ(s.full_passes, 0u) << "an idle worker with room is not waiting for the NIC";
    }
  }
}
