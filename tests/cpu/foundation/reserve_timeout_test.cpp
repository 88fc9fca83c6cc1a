// A reservation that timed out on a full exclusive QP is returned: the retry reserves the same
// WQEBBs and the QP keeps working (issue 13 item 6). Handle and OwnedQp alike.
#include <gtest/gtest.h>

#include <cstring>

#include "dissect/gda/gda.h"
#include "support/loopback.h"

namespace gda = dissect::gda;
using dissect::testing::fill_pattern;
using dissect::testing::Loopback;
using Policy = gda::ordering::system_release_store;
constexpr auto kExclusive = gda::Sharing::exclusive;
constexpr uint64_t kShortTimeoutNs = 1'000'000;

namespace {

constexpr uint32_t kRing = 8;

gda::WriteRequest write_number(Loopback& lb, uint32_t i) {
  return {lb.source_address(i * 64), lb.source_mr.lkey, 64, lb.destination_address(i * 64),
          lb.destination_mr.rkey};
}

// Fills the ring with the engine stopped, so the next reservation must wait.
template <typename Queue>
void fill_the_ring(Loopback& lb, Queue& queue) {
  lb.softnic->stop();
  for (uint32_t i = 0; i < kRing; ++i) {
    uint64_t end = 0;
    ASSERT_EQ(gda::put<Policy>(queue, write_number(lb, i), gda::Completion::signaled, &end), gda::Status::ok);
  }
}

TEST(ReserveTimeout, AHandleRetryAfterATimedOutReservationKeepsTheQpUsable) {
  dissect::nic::QpAttributes attributes;
  attributes.sq_wqebbs = kRing;
  Loopback lb(attributes, 4096);
  fill_pattern(lb.source.data(), lb.source.size(), 9);
  const auto qp = lb.qp();
  fill_the_ring(lb, qp);
  uint64_t base = 0;
  EXPECT_EQ((gda::reserve<Policy, kExclusive>(qp, 1, &base, kShortTimeoutNs)), gda::Status::timeout);
  EXPECT_EQ(qp.state->resv_head, kRing) << "the timed-out reservation was kept";
  lb.softnic->start();
  uint64_t end = 0;
  ASSERT_EQ(gda::put<Policy>(qp, write_number(lb, kRing), gda::Completion::signaled, &end), gda::Status::ok);
  EXPECT_EQ(end, kRing + 1);
  ASSERT_EQ((gda::wait_completion<Policy, kExclusive>(qp, end)), gda::Status::ok)
      << "syndrome " << dissect::nic::send_queue_error_syndrome(qp.state->error);
  EXPECT_EQ(0, std::memcmp(lb.destination.data(), lb.source.data(), (kRing + 1) * 64));
}

TEST(ReserveTimeout, AnOwnedQpRetryAfterATimedOutReservationKeepsTheQpUsable) {
  dissect::nic::QpAttributes attributes;
  attributes.sq_wqebbs = kRing;
  Loopback lb(attributes, 4096);
  fill_pattern(lb.source.data(), lb.source.size(), 10);
  gda::OwnedQp owned = gda::own(lb.qp());
  fill_the_ring(lb, owned);
  uint64_t base = 0;
  EXPECT_EQ((gda::reserve<Policy, kExclusive>(owned, 1, &base, kShortTimeoutNs)), gda::Status::timeout);
  EXPECT_EQ(owned.head, kRing);
  lb.softnic->start();
  uint64_t end = 0;
  ASSERT_EQ(gda::put<Policy>(owned, write_number(lb, kRing), gda::Completion::signaled, &end), gda::Status::ok);
  ASSERT_EQ(gda::quiet<Policy>(owned), gda::Status::ok);
  EXPECT_EQ(end, kRing + 1);
  EXPECT_EQ(0, std::memcmp(lb.destination.data(), lb.source.data(), (kRing + 1) * 64));
}

// A shared QP gives the reservation back while nobody reserved after it.
TEST(ReserveTimeout, ASharedQpReturnsATimedOutReservationWithNoLaterOne) {
  dissect::nic::QpAttributes attributes;
  attributes.sq_wqebbs = kRing;
  Loopback lb(attributes, 4096);
  fill_pattern(lb.source.data(), lb.source.size(), 11);
  const auto qp = lb.qp();
  fill_the_ring(lb, qp);
  uint64_t base = 0;
  EXPECT_EQ((gda::reserve<Policy, gda::Sharing::shared>(qp, 1, &base, kShortTimeoutNs)),
            gda::Status::timeout);
  EXPECT_EQ(qp.state->resv_head, kRing);
  lb.softnic->start();
  uint64_t end = 0;
  ASSERT_EQ((gda::put<Policy, gda::Sharing::shared>(qp, write_number(lb, kRing), gda::Completion::signaled, &end)),
            gda::Status::ok);
  ASSERT_EQ((gda::wait_completion<Policy, gda::Sharing::shared>(qp, end)), gda::Status::ok);
  EXPECT_EQ(0, std::memcmp(lb.destination.data(), lb.source.data(), (kRing + 1) * 64));
}

}  // namespace
