// Telemetry on the data path: the softnic resolves a slot per QP, mini-gda's hooks count exactly
// the traffic sent, and telemetry does not change what the run computes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "dissect/gda/gda.h"
#include "dissect/nic/observer.h"
#include "dissect/nic/qp_counters.h"
#include "dissect/telemetry/session.h"
#include "support/loopback.h"

namespace gda = dissect::gda;
using dissect::testing::fill_pattern;
using dissect::testing::Loopback;
using Policy = gda::counted<gda::ordering::system_release_store>;  // telemetry counts its posts
constexpr auto kExclusive = gda::Sharing::exclusive;

namespace {

class TelemetryOn : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gda::TELEMETRY_COMPILED) GTEST_SKIP() << "built with DISSECT_WITH_TELEMETRY=OFF";
  }
  static void SetUpTestSuite() {
    // Before the first softnic: the process session reads the environment once.
    setenv("DISSECT_TELEMETRY_ENABLE", "1", 1);
    setenv("DISSECT_TELEMETRY_OUTPUT_DIR", ::testing::TempDir().c_str(), 1);
    setenv("DISSECT_TELEMETRY_LATENCY_SAMPLE", "1", 1);
  }
};

// Linked in and enabled, the process session is what observes the NICs: the softnic asks the
// observer from below, it never calls telemetry.
TEST_F(TelemetryOn, TheProcessSessionObservesTheNics) {
  ASSERT_NE(dissect::telemetry::process_session(), nullptr);
  EXPECT_NE(dissect::nic::observer(), nullptr);
}

TEST_F(TelemetryOn, CountersEqualTheTrafficSent) {
  Loopback lb({}, 1 << 16);
  const auto qp = lb.qp();
  ASSERT_NE(qp.telemetry, nullptr) << "the softnic did not resolve a telemetry slot";
  fill_pattern(lb.source.data(), lb.source.size(), 1);
  uint64_t end = 0;
  for (int batch = 0; batch < 25; ++batch) {  // 100 writes of 64 B, 4 per doorbell
    gda::WriteRequest r[4];
    for (int k = 0; k < 4; ++k) {
      const size_t at = (batch * 4 + k) * 64;
      r[k] = {lb.source_address(at), lb.source_mr.lkey, 64, lb.destination_address(at),
              lb.destination_mr.rkey};
    }
    ASSERT_EQ((gda::post_writes<Policy, kExclusive>(qp, r, 4, &end)), gda::Status::ok);
  }
  uint8_t payload[20] = {7};
  for (int i = 0; i < 10; ++i) {  // 10 inline writes of 20 B
    gda::InlineWriteRequest r{payload, 20, lb.destination_address(8192), lb.destination_mr.rkey};
    ASSERT_EQ(gda::put_inline<Policy>(qp, r, gda::Completion::signaled, &end), gda::Status::ok);
  }
  for (int i = 0; i < 5; ++i) {  // 5 fetch-adds
    gda::FetchAddRequest r{lb.destination_address(9000 & ~7), lb.destination_mr.rkey, 1,
                           lb.source_address(9000 & ~7), lb.source_mr.lkey};
    ASSERT_EQ(gda::fetch_add<Policy>(qp, r, &end), gda::Status::ok);
  }
  ASSERT_EQ((gda::quiet<Policy, kExclusive>(qp)), gda::Status::ok);
  EXPECT_EQ(0, std::memcmp(lb.destination.data(), lb.source.data(), 100 * 64));

  const dissect::telemetry::QpCounters& c = *qp.telemetry;
  EXPECT_EQ(c.num_wqe_sent, 115u);
  EXPECT_EQ(c.num_write_wqe, 110u);
  EXPECT_EQ(c.tx_bytes, 100u * 64 + 10 * 20 + 5 * 8);
  EXPECT_EQ(c.num_doorbells, 25u + 10 + 5);
  EXPECT_EQ(c.doorbell_wqes, 115u);
  EXPECT_EQ(c.doorbell_wqes_max, 4u);
  EXPECT_EQ(c.doorbell_wqes_min, 1u);
  EXPECT_EQ(c.num_wqe_completed, 115u);
  EXPECT_EQ(c.num_cq_errors, 0u);
  uint64_t histogram_total = 0;
  for (uint32_t b = 0; b < c.histogram_buckets; ++b) histogram_total += c.wqe_completion_histogram[b];
  EXPECT_EQ(histogram_total, 115u) << "N = 1: every completion is in the histogram";
  EXPECT_GT(c.wqe_completion_ns_max, 0u);
}

TEST_F(TelemetryOn, ErrorCqesAreCounted) {
  Loopback lb({}, 4096);
  const auto qp = lb.qp();
  uint64_t end = 0;
  gda::WriteRequest bad{lb.source_address(), lb.source_mr.lkey, 8, lb.destination_address(),
                        lb.destination_mr.rkey ^ 0x100};
  ASSERT_EQ(gda::put<Policy>(qp, bad, gda::Completion::signaled, &end), gda::Status::ok);
  EXPECT_EQ((gda::wait_completion<Policy, kExclusive>(qp, end)), gda::Status::cq_error);
  EXPECT_EQ(qp.telemetry->num_cq_errors, 1u);
}

// One good CQE, then one error CQE: two CQEs drained, each counted once (the error as well).
TEST_F(TelemetryOn, AnErrorCqeCountsOnceAsDrained) {
  Loopback lb({}, 4096);
  const auto qp = lb.qp();
  uint64_t end = 0;
  gda::WriteRequest good{lb.source_address(), lb.source_mr.lkey, 8, lb.destination_address(),
                         lb.destination_mr.rkey};
  ASSERT_EQ(gda::put<Policy>(qp, good, gda::Completion::signaled, &end), gda::Status::ok);
  ASSERT_EQ((gda::wait_completion<Policy, kExclusive>(qp, end)), gda::Status::ok);
  EXPECT_EQ(qp.telemetry->num_wqe_rcvd, 1u);
  gda::WriteRequest bad = good;
  bad.rkey ^= 0x100;
  ASSERT_EQ(gda::put<Policy>(qp, bad, gda::Completion::signaled, &end), gda::Status::ok);
  EXPECT_EQ((gda::wait_completion<Policy, kExclusive>(qp, end)), gda::Status::cq_error);
  EXPECT_EQ(qp.telemetry->num_wqe_rcvd, 2u) << "the error CQE was counted twice";
  EXPECT_EQ(qp.telemetry->num_cq_errors, 1u);
}

}  // namespace
