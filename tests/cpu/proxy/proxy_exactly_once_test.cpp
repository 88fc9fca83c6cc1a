// Host threads as producers over a T x R x B grid, both handoffs: every request is a fetch-add of
// 1 on its own slot, so a lost descriptor leaves 0, a duplicated or twice-executed one leaves 2.
// 10^7 requests in total across the grid.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "dissect/proxy/handoff.h"
#include "proxy_rig.h"

namespace proxy = dissect::proxy;
using dissect::testing::count_request;
using dissect::testing::ProxyRig;

namespace {

struct GridPoint {
  uint32_t workers, rings, batch;
  proxy::Handoff handoff;
};

template <typename Handoff, proxy::Sharing S>
proxy::Status produce(const proxy::RingHandle& ring, uint64_t first_slot, uint64_t count,
                      uint32_t scratch) {
  uint64_t index = 0;
  for (uint64_t k = 0; k < count; ++k) {
    const proxy::Status s = proxy::enqueue<Handoff, S>(ring, count_request(first_slot + k, scratch), &index);
    if (s != proxy::Status::ok) return s;
  }
  return count == 0 ? proxy::Status::ok : proxy::wait_completion(ring, index);
}

// The ring's sole producer with its progress in registers (OwnedRing): posted descriptor stores.
proxy::Status produce_owned(const proxy::RingHandle& ring, uint64_t first_slot, uint64_t count,
                            uint32_t scratch) {
  proxy::OwnedRing owned = proxy::own(ring);
  uint64_t index = 0;
  for (uint64_t k = 0; k < count; ++k) {
    const proxy::Status s = proxy::enqueue(owned, count_request(first_slot + k, scratch), &index);
    if (s != proxy::Status::ok) return s;
  }
  proxy::disown(owned);  // the worker's drain report reads the head from ProducerState
  return count == 0 ? proxy::Status::ok : proxy::wait_completion(ring, index);
}

// One producer thread per ring (tuned: the ring's sole producer, through its handle or as an
// OwnedRing), or `sharers` per ring (baseline, or tuned with Sharing::shared).
void run(const GridPoint& p, uint64_t requests, uint32_t sharers = 1, bool owned = false) {
  proxy::ProxyConfig config;
  config.workers = p.workers;
  config.rings = p.rings;
  config.batch = p.batch;
  config.handoff = p.handoff;
  config.ring_entries = 256;
  config.pin = false;  // 2-core CI: let the scheduler place everything
  config.timeout_ns = 60'000'000'000ull;
  const uint32_t producers = p.rings * sharers;
  const uint64_t per_producer = requests / producers;
  const uint64_t slots = per_producer * producers;
  ProxyRig rig(config, slots * 8 + producers * 8 + 64);
  rig.proxy->start();
  std::vector<std::thread> threads;
  std::vector<proxy::Status> results(producers, proxy::Status::ok);
  for (uint32_t t = 0; t < producers; ++t) {
    threads.emplace_back([&, t] {
      const proxy::RingHandle ring = rig.proxy->ring(t % p.rings);
      const uint32_t scratch = static_cast<uint32_t>(slots * 8 + t * 8);
      const uint64_t first = t * per_producer;
      if (owned) {
        results[t] = produce_owned(ring, first, per_producer, scratch);
      } else if (sharers > 1 && p.handoff == proxy::Handoff::tuned) {
        results[t] = produce<proxy::tuned, proxy::Sharing::shared>(ring, first, per_producer, scratch);
      } else if (p.handoff == proxy::Handoff::tuned) {
        results[t] = produce<proxy::tuned, proxy::Sharing::exclusive>(ring, first, per_producer, scratch);
      } else {
        results[t] = produce<proxy::baseline, proxy::Sharing::shared>(ring, first, per_producer, scratch);
      }
    });
  }
  for (auto& t : threads) t.join();
  const proxy::ShutdownReport report = rig.proxy->stop(proxy::StopMode::drain);
  for (uint32_t t = 0; t < producers; ++t) ASSERT_EQ(results[t], proxy::Status::ok) << "producer " << t;
  ASSERT_TRUE(report.drained) << report.describe();
  const uint64_t* counts = rig.destination_words();
  for (uint64_t slot = 0; slot < slots; ++slot) {
    ASSERT_EQ(counts[slot], 1u) << "request " << slot << " executed " << counts[slot] << " times";
  }
  EXPECT_EQ(rig.executed_wqes(), slots);
  uint64_t consumed = 0;
  for (const auto& st : rig.proxy->stats()) consumed += st.descriptors;
  EXPECT_EQ(consumed, slots);
}

std::vector<GridPoint> grid() {
  std::vector<GridPoint> points;
  for (auto handoff : {proxy::Handoff::baseline, proxy::Handoff::tuned}) {
    for (uint32_t t : {1u, 2u, 4u}) {
      for (uint32_t r : {1u, 4u, 8u}) {
        if (r < t) continue;  // every worker serves at least one ring
        for (uint32_t b : {1u, 4u, 16u}) points.push_back({t, r, b, handoff});
      }
    }
  }
  return points;
}

constexpr uint64_t kGridRequests = 10'000'000;

TEST(ProxyExactlyOnce, TenMillionRequestsAcrossTheGrid) {
  const auto points = grid();
  const uint64_t shared_requests = 1'000'000;  // the shared-ring cases below
  const uint64_t per_point = (kGridRequests - shared_requests) / points.size();
  for (const GridPoint& p : points) {
    SCOPED_TRACE(testing::Message() << proxy::to_string(p.handoff) << " T=" << p.workers
                                    << " R=" << p.rings << " B=" << p.batch);
    run(p, per_point);
    if (HasFatalFailure()) return;
  }
}

TEST(ProxyExactlyOnce, SharedRingsBothHandoffs) {
  for (auto handoff : {proxy::Handoff::baseline, proxy::Handoff::tuned}) {
    SCOPED_TRACE(proxy::to_string(handoff));
    run({2, 2, 16, handoff}, 250'000, 4);  // 4 producers on each of 2 rings
    run({1, 1, 4, handoff}, 250'000, 3);
  }
}

TEST(ProxyExactlyOnce, OwnedRingsPostedStoresWrapSmallRings) {
  for (const GridPoint p : {GridPoint{1, 1, 1, proxy::Handoff::tuned},
                            GridPoint{2, 4, 16, proxy::Handoff::tuned},
                            GridPoint{4, 8, 4, proxy::Handoff::tuned}}) {
    SCOPED_TRACE(testing::Message() << "owned T=" << p.workers << " R=" << p.rings << " B=" << p.batch);
    run(p, 400'000, 1, true);
    if (HasFatalFailure()) return;
  }
}

}  // namespace
