// Batched posting of every operation, cooperative publication (gda/warp.h) and completion scopes
// (gda/scope.h), driven by host threads standing in for GPU threads and warps.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <vector>

#include "dissect/gda/gda.h"
#include "support/loopback.h"

namespace gda = dissect::gda;
using dissect::testing::Loopback;
using Policy = gda::ordering::system_release_store;
constexpr auto kExclusive = gda::Sharing::exclusive;
constexpr auto kShared = gda::Sharing::shared;

namespace {

uint64_t value_of(uint64_t message) { return message * 0x9e3779b97f4a7c15ull + 1; }

const uint64_t* destination_words(const Loopback& lb) {
  return reinterpret_cast<const uint64_t*>(lb.destination.data());
}

TEST(Batch, ValuesShareOneDoorbellAndOneCqe) {
  Loopback lb;
  const auto qp = lb.qp();
  for (uint32_t count : {1u, 2u, 16u, 100u}) {
    SCOPED_TRACE(count);
    const uint64_t doorbells = lb.softnic->counters(qp.qpn).doorbells;
    const uint64_t cqes = qp.state->cq_ci;
    uint64_t end = 0;
    ASSERT_EQ((gda::post_values<Policy>(
                  qp, count, 8, lb.destination_mr.rkey, [](uint32_t i) { return value_of(i); },
                  [&](uint32_t i) { return lb.destination_address(8 * i); }, &end)),
              gda::Status::ok);
    ASSERT_EQ((gda::quiet<Policy, kExclusive>(qp)), gda::Status::ok);
    for (uint32_t i = 0; i < count; ++i) ASSERT_EQ(destination_words(lb)[i], value_of(i)) << i;
    EXPECT_EQ(lb.softnic->counters(qp.qpn).doorbells - doorbells, 1u);
    EXPECT_EQ(qp.state->cq_ci - cqes, 1u) << "only the last WQE of a batch is signalled";
  }
}

TEST(Batch, InlineWritesOfOneLengthLandAndMixedLengthsAreRefused) {
  Loopback lb;
  const auto qp = lb.qp();
  std::vector<uint8_t> payload(16 * 100);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<uint8_t>(i * 7 + 1);
  std::vector<gda::InlineWriteRequest> requests;
  for (uint32_t i = 0; i < 16; ++i) {
    requests.push_back({payload.data() + 100 * i, 100, lb.destination_address(128 * i),
                        lb.destination_mr.rkey});
  }
  uint64_t end = 0;
  ASSERT_EQ((gda::post_inline_writes<Policy>(qp, requests.data(), 16, &end)), gda::Status::ok);
  ASSERT_EQ((gda::quiet<Policy, kExclusive>(qp)), gda::Status::ok);
  for (uint32_t i = 0; i < 16; ++i) {
    ASSERT_EQ(0, std::memcmp(lb.destination.data() + 128 * i, payload.data() + 100 * i, 100)) << i;
  }
  requests[3].length = 99;
  EXPECT_EQ((gda::post_inline_writes<Policy>(qp, requests.data(), 16, &end)),
            gda::Status::invalid_request);
}

// Several host threads each stand in for a warp on one QP: every message lands once, in its slot.
void run_cooperative(uint32_t warps, uint32_t groups_per_warp, uint32_t group, uint32_t sq_wqebbs) {
  dissect::nic::QpAttributes attributes;
  attributes.sq_wqebbs = sq_wqebbs;
  const uint32_t messages = warps * groups_per_warp * group;
  Loopback lb(attributes, size_t{messages} * 8 + 64);
  const auto qp = lb.qp();
  std::vector<std::thread> threads;
  std::vector<gda::Status> status(warps, gda::Status::ok);
  for (uint32_t w = 0; w < warps; ++w) {
    threads.emplace_back([&, w] {
      for (uint32_t g = 0; g < groups_per_warp && status[w] == gda::Status::ok; ++g) {
        const uint32_t first = (w * groups_per_warp + g) * group;
        uint64_t end = 0;
        auto post = [&](auto sharing) {
          return gda::post_values_cooperative<Policy, decltype(sharing)::value>(
              gda::HostWarp{}, qp, group, 8, lb.destination_mr.rkey,
              [&](uint32_t i) { return value_of(first + i); },
              [&](uint32_t i) { return lb.destination_address(8ull * (first + i)); }, &end);
        };
        status[w] = warps == 1 ? post(std::integral_constant<gda::Sharing, kExclusive>{})
                               : post(std::integral_constant<gda::Sharing, kShared>{});
      }
    });
  }
  for (auto& t : threads) t.join();
  for (uint32_t w = 0; w < warps; ++w) ASSERT_EQ(status[w], gda::Status::ok) << "warp " << w;
  ASSERT_EQ((gda::quiet<Policy, kShared>(qp, 60'000'000'000ull)), gda::Status::ok);
  for (uint32_t m = 0; m < messages; ++m) ASSERT_EQ(destination_words(lb)[m], value_of(m)) << m;
  const auto counters = lb.softnic->counters(qp.qpn);
  EXPECT_EQ(counters.wqes_executed, uint64_t{messages});
  EXPECT_LE(counters.doorbells, uint64_t{warps} * groups_per_warp) << "one doorbell per group at most";
}

TEST(Cooperative, OneWarpOwnsTheQp) { run_cooperative(1, 200, 32, 256); }
TEST(Cooperative, EightWarpsShareOneQpOnASmallRing) { run_cooperative(8, 100, 32, 64); }
TEST(Cooperative, GroupsLargerThanAWarp) { run_cooperative(2, 50, 100, 256); }

TEST(Cooperative, AnEmptyGroupIsRefused) {
  Loopback lb;
  uint64_t end = 0;
  EXPECT_EQ((gda::post_values_cooperative<Policy, kExclusive>(
                gda::HostWarp{}, lb.qp(), 0, 8, lb.destination_mr.rkey, [](uint32_t) { return 0ull; },
                [&](uint32_t) { return lb.destination_address(); }, &end)),
            gda::Status::invalid_request);
}

// Four QPs towards one peer: a quiet of the set completes all of them; an error on one is reported.
TEST(Scope, QuietOfASetCompletesEveryQpAndReportsAnError) {
  dissect::softnic::SoftNic nic;
  auto pd = nic.create_pd();
  std::vector<uint8_t> target(4096);
  const auto mr = pd->register_memory(target.data(), target.size(), dissect::nic::ACCESS_ALL);
  std::vector<std::unique_ptr<dissect::nic::QueuePair>> qps;
  std::vector<dissect::nic::QpHandle> handles;
  for (int i = 0; i < 4; ++i) {
    qps.push_back(pd->create_qp({}));
    qps.back()->connect(qps.back()->endpoint());
    handles.push_back(qps.back()->handle());
  }
  const gda::QpSet all{handles.data(), 4};
  for (uint32_t i = 0; i < 4; ++i) {
    uint64_t end = 0;
    ASSERT_EQ((gda::put_value<Policy>(handles[i], value_of(i), 8,
                                      reinterpret_cast<uint64_t>(target.data()) + 8 * i, mr.rkey,
                                      gda::Completion::signaled, &end)),
              gda::Status::ok);
  }
  ASSERT_EQ((gda::quiet<Policy, kExclusive>(all)), gda::Status::ok);
  for (uint32_t i = 0; i < 4; ++i) {
    EXPECT_EQ(handles[i].state->cons_idx, handles[i].state->ready_head) << "QP " << i;
    EXPECT_EQ(reinterpret_cast<const uint64_t*>(target.data())[i], value_of(i));
  }
  ASSERT_EQ((gda::quiet<Policy, kExclusive>(gda::HostWarp{}, gda::peer_qps(all, 1, 2))),
            gda::Status::ok);
  uint64_t end = 0;
  ASSERT_EQ((gda::put_value<Policy>(handles[2], 1, 8, reinterpret_cast<uint64_t>(target.data()),
                                    mr.rkey + 1, gda::Completion::signaled, &end)),
            gda::Status::ok);
  EXPECT_EQ((gda::quiet<Policy, kExclusive>(all)), gda::Status::cq_error);
  EXPECT_EQ((gda::quiet<Policy, kExclusive>(gda::peer_qps(all, 0, 2))), gda::Status::ok)
      << "the peer whose QPs did not fail completes";
}

}  // namespace
