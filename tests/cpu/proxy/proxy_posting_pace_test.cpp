// A worker's own posting pace (WorkerStats::stamped_descriptors, stamped_ns): the clock is read at
// its first post and every POST_STAMP_PERIOD-th after it, so at B = 1 (a descriptor a post) the
// stamped span holds exactly the descriptors of the posts between the first and the last sample.
#include <gtest/gtest.h>

#include <thread>

#include "dissect/proxy/handoff.h"
#include "proxy_rig.h"

namespace proxy = dissect::proxy;

namespace {

// One worker, one ring, `requests` 8 B writes from one host producer, chained up to `batch`; the
// worker QP's send queue `sq_wqebbs` deep. Returns the worker's stats after a drain.
proxy::WorkerStats post(uint64_t requests, uint32_t batch = 1, uint32_t sq_wqebbs = 256) {
  proxy::ProxyConfig config;
  config.workers = 1;
  config.rings = 1;
  config.batch = batch;
  config.ring_entries = 256;
  config.pin = false;
  dissect::testing::ProxyRig rig(config, 1 << 12, sq_wqebbs);
  rig.proxy->start();
  bool ok = false;
  std::thread producer([&] {
    const proxy::RingHandle ring = rig.proxy->ring(0);
    uint64_t index = 0;
    for (uint64_t i = 0; i < requests; ++i) {
      const proxy::Request request{proxy::Operation::write, 0, 8, 0, 64};
      if (proxy::enqueue<proxy::tuned>(ring, request, &index) != proxy::Status::ok) return;
    }
    ok = proxy::wait_completion(ring, index) == proxy::Status::ok;
  });
  producer.join();
  const proxy::ShutdownReport report = rig.proxy->stop(proxy::StopMode::drain);
  EXPECT_TRUE(ok);
  EXPECT_TRUE(report.drained) << report.describe();
  const proxy::WorkerStats stats = rig.proxy->stats()[0];
  EXPECT_EQ(stats.descriptors, requests);
  return stats;
}

TEST(ProxyPostingPace, TheStampedSpanHoldsThePostsBetweenTheFirstAndTheLastSample) {
  const proxy::WorkerStats s = post(200);  // B = 1, one descriptor a post: samples at 1, 65, 129, 193
  EXPECT_EQ(s.posts, 200u);
  EXPECT_EQ(s.stamped_descriptors, 3 * proxy::POST_STAMP_PERIOD);
  EXPECT_GT(s.stamped_ns, 0u);
}

TEST(ProxyPostingPace, FewerPostsThanASamplePeriodStampNoSpan) {
  const proxy::WorkerStats s = post(proxy::POST_STAMP_PERIOD);
  EXPECT_EQ(s.stamped_descriptors, 0u);
  EXPECT_EQ(s.stamped_ns, 0u);
}

// gpu-proxy-rate's held points: a worker whose send queue holds the whole run never ends a pass
// without room, whatever the engine does, so its posting pace is its own.
TEST(ProxyPostingPace, AWorkerQueueThatHoldsTheRunNeverRunsOutOfRoom) {
  const proxy::WorkerStats held = post(20000, 16, 32768);
  EXPECT_EQ(held.full_passes, 0u);
  EXPECT_GT(held.stamped_descriptors, 0u);
}

}  // namespace
