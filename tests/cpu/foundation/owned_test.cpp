// A QP owned by one thread (gda/owned.h): counters in registers, the ring still wraps, waits for
// room and never overwrites; the state in memory is what a plain handle expects after a wait or
// disown(); put_value.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "dissect/gda/gda.h"
#include "support/loopback.h"

namespace gda = dissect::gda;
using dissect::testing::fill_pattern;
using dissect::testing::Loopback;
using Policy = gda::ordering::system_release_store;

namespace {

TEST(OwnedQp, WrapsTheRingWaitingForRoomWithoutAWaitBetweenPuts) {
  dissect::nic::QpAttributes attributes;
  attributes.sq_wqebbs = 16;
  Loopback lb(attributes, 64 * 1024);
  fill_pattern(lb.source.data(), lb.source.size(), 3);
  gda::OwnedQp owned = gda::own(lb.qp());
  uint64_t end = 0;
  // 1000 puts, signalled one in four, never waited for: every lap the reservation must find the
  // ring full in its registers, re-read cons_idx and wait for the engine.
  for (uint32_t i = 0; i < 1000; ++i) {
    const size_t offset = (i % 1024) * 64;
    gda::WriteRequest r{lb.source_address(offset), lb.source_mr.lkey, 64,
                        lb.destination_address(offset), lb.destination_mr.rkey};
    const auto c = i % 4 == 3 ? gda::Completion::signaled : gda::Completion::unsignaled;
    ASSERT_EQ(gda::put<Policy>(owned, r, c, &end), gda::Status::ok) << i;
  }
  ASSERT_EQ(gda::quiet<Policy>(owned), gda::Status::ok);
  EXPECT_EQ(end, 1000u);
  EXPECT_EQ(0, std::memcmp(lb.destination.data(), lb.source.data(), 1000 * 64));
  EXPECT_EQ(lb.softnic->counters(owned.qp.qpn).wqes_executed, 1000u);
  // The memory copy of the counters is what a plain handle continues from.
  const auto* state = owned.qp.state;
  EXPECT_EQ(state->resv_head, 1000u);
  EXPECT_EQ(state->ready_head, 1000u);
  EXPECT_EQ(state->prod_idx, 1000u);
  EXPECT_GE(state->cons_idx, 1000u);
  gda::WriteRequest r{lb.source_address(0), lb.source_mr.lkey, 8, lb.destination_address(65536 - 8),
                      lb.destination_mr.rkey};
  ASSERT_EQ(gda::put<Policy>(lb.qp(), r, gda::Completion::signaled, &end), gda::Status::ok);
  ASSERT_EQ((gda::wait_completion<Policy, gda::Sharing::exclusive>(lb.qp(), end)), gda::Status::ok);
  EXPECT_EQ(end, 1001u);
  EXPECT_EQ(0, std::memcmp(lb.destination.data() + 65536 - 8, lb.source.data(), 8));
}

TEST(OwnedQp, AFullRingBlocksAndNeverOverwritesAnUncompletedWqe) {
  dissect::nic::QpAttributes attributes;
  attributes.sq_wqebbs = 8;
  Loopback lb(attributes, 4096);
  lb.softnic->stop();
  fill_pattern(lb.source.data(), 64 * 9, 11);
  gda::OwnedQp owned = gda::own(lb.qp());
  for (uint32_t i = 0; i < 8; ++i) {
    gda::WriteRequest r{lb.source_address(i * 64), lb.source_mr.lkey, 64,
                        lb.destination_address(i * 64), lb.destination_mr.rkey};
    uint64_t end = 0;
    ASSERT_EQ(gda::put<Policy>(owned, r, gda::Completion::signaled, &end), gda::Status::ok);
  }
  const std::vector<uint8_t> ring_before(owned.qp.sq.buffer, owned.qp.sq.buffer + 8 * 64);
  std::atomic<bool> returned{false};
  std::thread ninth([&] {
    gda::WriteRequest r{lb.source_address(8 * 64), lb.source_mr.lkey, 64,
                        lb.destination_address(8 * 64), lb.destination_mr.rkey};
    uint64_t end = 0;
    EXPECT_EQ(gda::put<Policy>(owned, r, gda::Completion::signaled, &end), gda::Status::ok);
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(returned.load()) << "the ninth WQE did not wait for room";
  EXPECT_EQ(ring_before, std::vector<uint8_t>(owned.qp.sq.buffer, owned.qp.sq.buffer + 8 * 64));
  lb.softnic->start();
  ninth.join();
  ASSERT_EQ(gda::quiet<Policy>(owned), gda::Status::ok);
  EXPECT_EQ(0, std::memcmp(lb.destination.data(), lb.source.data(), 9 * 64));
}

// A put stores the WQE, the dbrec and the doorbell only: the memory copy of the counters is
// brought up to date by disown() (or a wait), after which the plain handle continues the QP.
TEST(OwnedQp, PutsLeaveTheStateBlockToDisown) {
  Loopback lb({}, 4096);
  fill_pattern(lb.source.data(), 3 * 64, 5);
  gda::OwnedQp owned = gda::own(lb.qp());
  uint64_t end = 0;
  for (uint32_t i = 0; i < 3; ++i) {
    gda::WriteRequest r{lb.source_address(i * 64), lb.source_mr.lkey, 64,
                        lb.destination_address(i * 64), lb.destination_mr.rkey};
    ASSERT_EQ(gda::put<Policy>(owned, r, gda::Completion::signaled, &end), gda::Status::ok);
  }
  const auto* state = owned.qp.state;
  EXPECT_EQ(state->resv_head, 0u);
  EXPECT_EQ(state->prod_idx, 0u);
  EXPECT_EQ(owned.head, 3u);
  gda::disown(owned);
  EXPECT_EQ(state->resv_head, 3u);
  EXPECT_EQ(state->ready_head, 3u);
  EXPECT_EQ(state->prod_idx, 3u);
  ASSERT_EQ((gda::wait_completion<Policy, gda::Sharing::exclusive>(lb.qp(), end)), gda::Status::ok);
  EXPECT_EQ(0, std::memcmp(lb.destination.data(), lb.source.data(), 3 * 64));
}

TEST(PutValue, EveryLengthFromOneToEightBytesLandsExactly) {
  Loopback lb({}, 4096);
  const auto qp = lb.qp();
  const uint64_t value = 0x8877665544332211ull;
  for (uint32_t length = 1; length <= 8; ++length) {
    const size_t offset = length * 64;
    uint64_t end = 0;
    ASSERT_EQ(gda::put_value<Policy>(qp, value, length, lb.destination_address(offset),
                                     lb.destination_mr.rkey, gda::Completion::signaled, &end),
              gda::Status::ok);
    ASSERT_EQ((gda::wait_completion<Policy, gda::Sharing::exclusive>(qp, end)), gda::Status::ok);
    EXPECT_EQ(0, std::memcmp(lb.destination.data() + offset, &value, length)) << length;
    for (size_t b = length; b < 64; ++b) {
      ASSERT_EQ(lb.destination[offset + b], 0) << "length " << length << " wrote byte " << b;
    }
  }
}

TEST(PutValue, MoreThanEightBytesIsRefusedBeforeAnythingIsReserved) {
  Loopback lb({}, 4096);
  const auto qp = lb.qp();
  uint64_t end = 0;
  for (uint32_t length : {0u, 9u, 64u}) {
    EXPECT_EQ(gda::put_value<Policy>(qp, 1, length, lb.destination_address(0), lb.destination_mr.rkey,
                                     gda::Completion::signaled, &end),
              gda::Status::invalid_request) << length;
  }
  EXPECT_EQ(qp.state->resv_head, 0u);
  EXPECT_EQ(lb.softnic->counters(qp.qpn).doorbells, 0u);
}

}  // namespace
