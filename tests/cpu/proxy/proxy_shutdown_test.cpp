// Stopping a worker drains what was published, or reports what is left (count, ring, index);
// a bad descriptor fails its ring instead of being executed.
#include <gtest/gtest.h>

#include <string>

#include "dissect/proxy/handoff.h"
#include "proxy_rig.h"

namespace proxy = dissect::proxy;
using dissect::testing::count_request;
using dissect::testing::ProxyRig;

namespace {

proxy::ProxyConfig config_for(uint32_t rings, proxy::Handoff handoff = proxy::Handoff::tuned) {
  proxy::ProxyConfig config;
  config.rings = rings;
  config.ring_entries = 64;
  config.handoff = handoff;
  config.pin = false;
  return config;
}

TEST(Shutdown, DrainExecutesEveryPublishedDescriptor) {
  for (auto handoff : {proxy::Handoff::baseline, proxy::Handoff::tuned}) {
    ProxyRig rig(config_for(1, handoff), 1 << 16);
    rig.proxy->start();
    const proxy::RingHandle ring = rig.proxy->ring(0);
    uint64_t index = 0;
    for (uint32_t k = 0; k < 1000; ++k) {
      if (handoff == proxy::Handoff::tuned) {
        ASSERT_EQ(proxy::enqueue<proxy::tuned>(ring, count_request(k, 1 << 15), &index), proxy::Status::ok);
      } else {
        ASSERT_EQ(proxy::enqueue<proxy::baseline>(ring, count_request(k, 1 << 15), &index), proxy::Status::ok);
      }
    }
    const proxy::ShutdownReport report = rig.proxy->stop(proxy::StopMode::drain);
    EXPECT_TRUE(report.drained) << report.describe();
    for (uint32_t k = 0; k < 1000; ++k) ASSERT_EQ(rig.destination_words()[k], 1u) << "request " << k;
  }
}

TEST(Shutdown, AbandonReportsPublishedDescriptorsByRingAndIndex) {
  ProxyRig rig(config_for(2), 4096);
  const proxy::RingHandle ring = rig.proxy->ring(1);
  uint64_t index = 0;
  for (uint32_t k = 0; k < 5; ++k) {
    ASSERT_EQ(proxy::enqueue<proxy::tuned>(ring, count_request(k, 1024), &index), proxy::Status::ok);
  }
  const proxy::ShutdownReport report = rig.proxy->stop(proxy::StopMode::abandon);
  ASSERT_FALSE(report.drained);
  ASSERT_EQ(report.pending.size(), 1u) << report.describe();
  EXPECT_EQ(report.pending[0].ring, 1u);
  EXPECT_EQ(report.pending[0].first_unconsumed, 0u);
  EXPECT_EQ(report.pending[0].published, 5u);
  EXPECT_EQ(report.pending[0].reserved, 5u);
  EXPECT_NE(report.describe().find("ring 1 (worker 0): 5 published"), std::string::npos) << report.describe();
  EXPECT_EQ(rig.executed_wqes(), 0u);
}

TEST(Shutdown, DrainThatCannotCompleteReportsWhatIsInFlight) {
  proxy::ProxyConfig config = config_for(1);
  config.drain_timeout_ns = 50'000'000;
  ProxyRig rig(config, 4096);
  rig.softnic->stop();  // the NIC never completes anything
  rig.proxy->start();
  const proxy::RingHandle ring = rig.proxy->ring(0);
  uint64_t index = 0;
  for (uint32_t k = 0; k < 10; ++k) {
    ASSERT_EQ(proxy::enqueue<proxy::tuned>(ring, count_request(k, 1024), &index), proxy::Status::ok);
  }
  const proxy::ShutdownReport report = rig.proxy->stop(proxy::StopMode::drain);
  ASSERT_FALSE(report.drained);
  ASSERT_EQ(report.pending.size(), 1u);
  EXPECT_EQ(report.pending[0].in_flight, 10u) << report.describe();
  EXPECT_EQ(report.pending[0].first_in_flight, 0u);
  EXPECT_EQ(report.pending[0].published, 0u);
}

TEST(Shutdown, BadWindowFailsItsRingAndIsNotExecuted) {
  ProxyRig rig(config_for(1), 4096);
  rig.proxy->start();
  const proxy::RingHandle ring = rig.proxy->ring(0);
  uint64_t index = 0;
  proxy::Request bad = count_request(0, 1024);
  bad.window = 9;
  testing::internal::CaptureStderr();
  ASSERT_EQ(proxy::enqueue<proxy::tuned>(ring, bad, &index), proxy::Status::ok);
  EXPECT_EQ(proxy::wait_completion(ring, index), proxy::Status::failed);
  const std::string message = testing::internal::GetCapturedStderr();
  EXPECT_NE(message.find("ring 0 descriptor 0"), std::string::npos) << message;
  EXPECT_EQ(ring.consumer->error & 0xff, proxy::RING_ERROR_BAD_WINDOW);
  EXPECT_EQ(rig.destination_words()[0], 0u);
  EXPECT_EQ(rig.proxy->stats()[0].bad_descriptors, 1u);
}

TEST(Shutdown, ErrorCqeFailsItsRing) {
  ProxyRig rig(config_for(1), 4096);
  rig.proxy->start();
  const proxy::RingHandle ring = rig.proxy->ring(0);
  uint64_t index = 0;
  testing::internal::CaptureStderr();
  // Past the end of the destination window: the NIC answers with a remote access error CQE.
  ASSERT_EQ(proxy::enqueue<proxy::tuned>(ring, count_request(1 << 20, 1024), &index), proxy::Status::ok);
  EXPECT_EQ(proxy::wait_completion(ring, index), proxy::Status::failed);
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(ring.consumer->error & 0xff, proxy::RING_ERROR_CQE);
}

}  // namespace
