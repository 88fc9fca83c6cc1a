// The send ring: wrapping, WQEs that straddle its end, doorbell batching, and a full ring.
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


TEST(Ring, WrapsTenTimesWithStraddlingInlineWqes) {
  dissect::nic::QpAttributes attributes;
  attributes.sq_wqebbs = 16;
  attributes.max_inline = 200;
  Loopback lb(attributes, 1 << 16);
  const auto qp = lb.qp();
  uint64_t straddled = 0;
  uint64_t end = 0;
  for (uint32_t i = 0; end < 12 * attributes.sq_wqebbs; ++i) {
    // 1..4-WQEBB WQEs, so starts fall on every slot and some cross the end of the ring.
    const uint32_t length = 1 + (i * 37) % 200;
    const uint32_t wqebbs = gda::inline_write_wqebbs(length);
    const uint64_t start = qp.state->resv_head;
    if ((start & 15) + wqebbs > 16) ++straddled;
    std::vector<uint8_t> payload(length);
    fill_pattern(payload.data(), length, i);
    const size_t offset = (i % 64) * 256;
    gda::InlineWriteRequest request{payload.data(), length, lb.destination_address(offset),
                                    lb.destination_mr.rkey};
    ASSERT_EQ(gda::put_inline<Policy>(qp, request, gda::Completion::signaled, &end), gda::Status::ok);
    ASSERT_EQ((gda::wait_completion<Policy, gda::Sharing::exclusive>(qp, end)), gda::Status::ok);
    ASSERT_EQ(0, std::memcmp(lb.destination.data() + offset, payload.data(), length)) << "WQE " << i;
  }
  EXPECT_GE(end / attributes.sq_wqebbs, 10u);
  EXPECT_GT(straddled, 5u) << "the sweep must exercise WQEs that wrap the ring";
}

TEST(Ring, OneToTwoHundredFiftySixWqesPerDoorbell) {
  dissect::nic::QpAttributes attributes;
  attributes.sq_wqebbs = 256;
  Loopback lb(attributes, 256 * 64);
  const auto qp = lb.qp();
  fill_pattern(lb.source.data(), lb.source.size(), 99);
  for (uint32_t count = 1; count <= 256; count = count < 8 ? count + 1 : count * 2) {
    std::memset(lb.destination.data(), 0, lb.destination.size());
    std::vector<gda::WriteRequest> requests(count);
    for (uint32_t i = 0; i < count; ++i) {
      requests[i] = {lb.source_address(i * 64), lb.source_mr.lkey, 64, lb.destination_address(i * 64),
                     lb.destination_mr.rkey};
    }
    const uint64_t doorbells_before = lb.softnic->counters(qp.qpn).doorbells;
    uint64_t end = 0;
    ASSERT_EQ(gda::post_writes<Policy>(qp, requests.data(), count, &end), gda::Status::ok);
    ASSERT_EQ((gda::wait_completion<Policy, gda::Sharing::exclusive>(qp, end)), gda::Status::ok);
    EXPECT_EQ(lb.softnic->counters(qp.qpn).doorbells - doorbells_before, 1u) << count;
    ASSERT_EQ(0, std::memcmp(lb.destination.data(), lb.source.data(), count * 64)) << count;
    for (size_t i = count * 64; i < lb.destination.size(); ++i) ASSERT_EQ(lb.destination[i], 0);
  }
}

// wait_completion stops polling at the CQE it waits for: a later CQE, already written, stays in
// the CQ for the next wait (one round trip less between a CQE and the next post on the GPU).
TEST(Ring, WaitCompletionStopsAtTheCqeItWaitsFor) {
  Loopback lb;
  const auto qp = lb.qp();
  uint64_t first = 0, second = 0;
  ASSERT_EQ(gda::put_value<Policy>(qp, 0x1234, 8, lb.destination_address(0), lb.destination_mr.rkey,
                                   gda::Completion::signaled, &first), gda::Status::ok);
  ASSERT_EQ(gda::put_value<Policy>(qp, 0x5678, 8, lb.destination_address(8), lb.destination_mr.rkey,
                                   gda::Completion::signaled, &second), gda::Status::ok);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (lb.softnic->counters(qp.qpn).cqes_written < 2) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the engine wrote no second CQE";
    std::this_thread::yield();
  }
  ASSERT_EQ((gda::wait_completion<Policy, gda::Sharing::exclusive>(qp, first)), gda::Status::ok);
  EXPECT_EQ(qp.state->cons_idx, first);
  EXPECT_EQ(qp.state->cq_ci, 1u);
  ASSERT_EQ((gda::wait_completion<Policy, gda::Sharing::exclusive>(qp, second)), gda::Status::ok);
  EXPECT_EQ(qp.state->cons_idx, second);
  EXPECT_EQ(qp.state->cq_ci, 2u);
  // poll_cq still takes every CQE there is.
  ASSERT_EQ(gda::put_value<Policy>(qp, 1, 8, lb.destination_address(16), lb.destination_mr.rkey,
                                   gda::Completion::signaled, &first), gda::Status::ok);
  ASSERT_EQ(gda::put_value<Policy>(qp, 2, 8, lb.destination_address(24), lb.destination_mr.rkey,
                                   gda::Completion::signaled, &second), gda::Status::ok);
  while (lb.softnic->counters(qp.qpn).cqes_written < 4) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the engine wrote no fourth CQE";
    std::this_thread::yield();
  }
  EXPECT_EQ((gda::poll_cq<Policy, gda::Sharing::exclusive>(qp)), 2u);
  EXPECT_EQ(qp.state->cons_idx, second);
}

TEST(Ring, AFullRingBlocksAndNeverOverwritesAnUncompletedWqe) {
  dissect::nic::QpAttributes attributes;
  attributes.sq_wqebbs = 8;
  Loopback lb(attributes, 4096);
  const auto qp = lb.qp();
  lb.softnic->stop();
  fill_pattern(lb.source.data(), 64 * 9, 5);
  for (uint32_t i = 0; i < 8; ++i) {
    gda::WriteRequest r{lb.source_address(i * 64), lb.source_mr.lkey, 64, lb.destination_address(i * 64),
                        lb.destination_mr.rkey};
    uint64_t end = 0;
    ASSERT_EQ(gda::put<Policy>(qp, r, gda::Completion::signaled, &end), gda::Status::ok);
  }
  const std::vector<uint8_t> ring_before(qp.sq.buffer, qp.sq.buffer + 8 * 64);
  std::atomic<bool> returned{false};
  std::thread ninth([&] {
    gda::WriteRequest r{lb.source_address(8 * 64), lb.source_mr.lkey, 64, lb.destination_address(8 * 64),
                        lb.destination_mr.rkey};
    uint64_t end = 0;
    EXPECT_EQ(gda::put<Policy>(qp, r, gda::Completion::signaled, &end), gda::Status::ok);
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(returned.load()) << "the ninth WQE did not wait for room";
  EXPECT_EQ(ring_before, std::vector<uint8_t>(qp.sq.buffer, qp.sq.buffer + 8 * 64))
      << "a WQE that had not completed was overwritten";
  lb.softnic->start();
  ninth.join();
  EXPECT_TRUE(returned.load());
  ASSERT_EQ((gda::quiet<Policy, gda::Sharing::exclusive>(qp)), gda::Status::ok);
  EXPECT_EQ(0, std::memcmp(lb.destination.data(), lb.source.data(), 9 * 64));
}

// The NIC's deepest backlog (gpu-rate's bottleneck, bench/gpu/rate_bound.h): the WQEBBs announced
// and not yet executed when a doorbell came, its maximum over the QP's life, not a sum.
TEST(Ring, TheNicKeepsTheDeepestBacklogADoorbellFound) {
  dissect::nic::QpAttributes attributes;
  attributes.sq_wqebbs = 64;
  Loopback lb(attributes, 4096);
  const auto qp = lb.qp();
  const auto post = [&](uint32_t n, bool wait) {
    uint64_t end = 0;
    for (uint32_t i = 0; i < n; ++i) {
      ASSERT_EQ(gda::put_value<Policy>(qp, i + 1, 8, lb.destination_address(8 * (i % 64)), lb.destination_mr.rkey,
                                       gda::Completion::signaled, &end), gda::Status::ok);
      if (wait) {
        ASSERT_EQ((gda::wait_completion<Policy, gda::Sharing::exclusive>(qp, end)), gda::Status::ok);
      }
    }
    ASSERT_EQ((gda::quiet<Policy, gda::Sharing::exclusive>(qp)), gda::Status::ok);
  };
  lb.softnic->stop();
  EXPECT_EQ(lb.softnic->counters(qp.qpn).deepest_backlog, 0u);
  for (uint32_t i = 0; i < 40; ++i) {  // 40 doorbells while the engine is stopped: one backlog of 40
    uint64_t end = 0;
    ASSERT_EQ(gda::put_value<Policy>(qp, i, 8, lb.destination_address(8 * i), lb.destination_mr.rkey,
                                     gda::Completion::signaled, &end), gda::Status::ok);
  }
  lb.softnic->start();
  ASSERT_EQ((gda::quiet<Policy, gda::Sharing::exclusive>(qp)), gda::Status::ok);
  EXPECT_EQ(lb.softnic->counters(qp.qpn).deepest_backlog, 40u);
  post(100, true);  // one WQE announced at a time, each executed before the next: never deeper
  EXPECT_EQ(lb.softnic->counters(qp.qpn).deepest_backlog, 40u);
  EXPECT_EQ(lb.softnic->counters(qp.qpn).wqes_executed, 140u);
  lb.softnic->stop();
  for (uint32_t i = 0; i < 50; ++i) {
    uint64_t end = 0;
    ASSERT_EQ(gda::put_value<Policy>(qp, i, 8, lb.destination_address(8 * i), lb.destination_mr.rkey,
                                     gda::Completion::unsignaled, &end), gda::Status::ok);
  }
  uint64_t end = 0;
  ASSERT_EQ(gda::put_value<Policy>(qp, 0, 8, lb.destination_address(0), lb.destination_mr.rkey,
                                   gda::Completion::signaled, &end), gda::Status::ok);
  lb.softnic->start();
  ASSERT_EQ((gda::quiet<Policy, gda::Sharing::exclusive>(qp)), gda::Status::ok);
  EXPECT_EQ(lb.softnic->counters(qp.qpn).deepest_backlog, 51u);
  EXPECT_EQ(lb.softnic->port_counters().deepest_backlog, 51u);
}

}  // namespace
