// Telemetry for mini-proxy: a channel is one worker and its rings. With T = 2 workers, each
// worker's QP on its own channel, the per-QP counters equal exactly what each worker was sent
// and posted, and the process's telemetry document shows one channel per worker.
#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

#include "dissect/nic/qp_counters.h"
#include "dissect/nic/telemetry_policy.h"
#include "dissect/proxy/handoff.h"
#include "dissect/telemetry/session.h"
#include "json_schema.h"
#include "proxy_rig.h"

namespace proxy = dissect::proxy;
using dissect::telemetry::test::JsonValue;

namespace {

class ProxyTelemetry : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!dissect::telemetry::TELEMETRY_COMPILED) GTEST_SKIP() << "built with DISSECT_WITH_TELEMETRY=OFF";
  }
  static void SetUpTestSuite() {
    // Before the first softnic: the process session reads the environment once.
    setenv("DISSECT_TELEMETRY_ENABLE", "1", 1);
    setenv("DISSECT_TELEMETRY_OUTPUT_DIR", ::testing::TempDir().c_str(), 1);
    setenv("DISSECT_TELEMETRY_LATENCY_SAMPLE", "1", 1);
  }
};

const JsonValue* find_by_id(const JsonValue& array, int64_t id) {
  for (const JsonValue& v : array) {
    if (v.at("id").get<int64_t>() == id) return &v;
  }
  return nullptr;
}

TEST_F(ProxyTelemetry, EachWorkerCountsExactlyItsTrafficOnItsOwnChannel) {
  constexpr uint32_t kWorkers = 2;
  constexpr uint64_t kRequests[kWorkers] = {3000, 1000};  // through ring 0 (worker 0), ring 1 (worker 1)
  constexpr uint32_t kLength[kWorkers] = {8, 64};
  proxy::ProxyConfig config;
  config.workers = kWorkers;
  config.rings = kWorkers;
  config.batch = 16;
  config.ring_entries = 256;
  config.pin = false;
  dissect::testing::ProxyRig rig(config, 1 << 16);
  for (uint32_t w = 0; w < kWorkers; ++w) {
    ASSERT_NE(rig.requesters[w]->handle().telemetry, nullptr) << "worker " << w << "'s QP has no telemetry slot";
  }
  rig.proxy->start();

  std::vector<std::thread> producers;
  std::vector<bool> ok(kWorkers, false);
  for (uint32_t r = 0; r < kWorkers; ++r) {
    producers.emplace_back([&, r] {
      const proxy::RingHandle ring = rig.proxy->ring(r);
      const uint32_t offset = r * 32768;
      uint64_t index = 0;
      for (uint64_t i = 0; i < kRequests[r]; ++i) {
        const proxy::Request request{proxy::Operation::write, 0, kLength[r], offset, offset};
        if (proxy::enqueue<proxy::tuned>(ring, request, &index) != proxy::Status::ok) return;
      }
      ok[r] = proxy::wait_completion(ring, index) == proxy::Status::ok;
    });
  }
  for (auto& t : producers) t.join();
  const proxy::ShutdownReport report = rig.proxy->stop(proxy::StopMode::drain);
  ASSERT_TRUE(report.drained) << report.describe();
  const std::vector<proxy::WorkerStats> stats = rig.proxy->stats();
  ASSERT_EQ(stats.size(), kWorkers);

  for (uint32_t w = 0; w < kWorkers; ++w) {
    ASSERT_TRUE(ok[w]) << "producer of ring " << w << " failed";
    SCOPED_TRACE("worker " + std::to_string(w));
    EXPECT_EQ(stats[w].descriptors, kRequests[w]);
    const dissect::telemetry::QpCounters& c = *rig.requesters[w]->handle().telemetry;
    EXPECT_EQ(c.num_wqe_sent, kRequests[w]);
    EXPECT_EQ(c.num_write_wqe, kRequests[w]);
    EXPECT_EQ(c.tx_bytes, kRequests[w] * kLength[w]);
    EXPECT_EQ(c.num_doorbells, stats[w].posts) << "one doorbell per post";
    EXPECT_EQ(c.doorbell_wqes, kRequests[w]);
    EXPECT_LE(c.doorbell_wqes_max, config.batch);
    EXPECT_GE(c.num_doorbells, (kRequests[w] + config.batch - 1) / config.batch);
    EXPECT_EQ(c.num_wqe_completed, kRequests[w]);
    EXPECT_EQ(c.num_cq_errors, 0u);
    // The responders only receive RDMA writes: nothing sent from them.
    EXPECT_EQ(rig.responders[w]->handle().telemetry->num_wqe_sent, 0u);
  }

  // The document: the softnic device has one channel per worker, channel w holding worker w's QP.
  dissect::telemetry::Session* session = dissect::telemetry::process_session();
  ASSERT_NE(session, nullptr);
  const JsonValue document = dissect::telemetry::test::parse_json(session->document());
  const JsonValue* device = nullptr;
  for (const JsonValue& d : document.at("devices")) {
    if (d.at("hw_type").get<std::string>() == "softnic" && d.at("channels").size() == kWorkers) device = &d;
  }
  ASSERT_NE(device, nullptr) << "no softnic device with " << kWorkers << " channels";
  for (uint32_t w = 0; w < kWorkers; ++w) {
    SCOPED_TRACE("channel " + std::to_string(w));
    const JsonValue* channel = find_by_id(device->at("channels"), w);
    ASSERT_NE(channel, nullptr);
    const JsonValue* qp = find_by_id(channel->at("queue_pairs"), rig.requesters[w]->qpn());
    ASSERT_NE(qp, nullptr) << "worker " << w << "'s QP is not on channel " << w;
    EXPECT_EQ(qp->at("num_wqe_sent").get<int64_t>(), static_cast<int64_t>(kRequests[w]));
    EXPECT_EQ(channel->at("num_wqe_sent").get<int64_t>(), static_cast<int64_t>(kRequests[w]))
        << "channel totals are the sum of its QPs";
    EXPECT_EQ(qp->at("tx_bytes").get<int64_t>(), static_cast<int64_t>(kRequests[w] * kLength[w]));
  }
}

}  // namespace
