// Many threads sharing one QP: reserve, build, publish in reservation order, share doorbells.
// Nothing is lost and nothing is executed twice.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "dissect/gda/gda.h"
#include "support/loopback.h"

namespace gda = dissect::gda;
using dissect::testing::Loopback;
using Policy = gda::ordering::gpu_release_store;
constexpr auto kShared = gda::Sharing::shared;

namespace {

// Each WQE is a fetch-add of 1 on the slot counting its (thread, sequence) id: a lost WQE leaves a
// slot at 0, a duplicated one at 2. The total check also catches a WQE executed for another slot.
void run_shared(uint32_t threads, uint32_t total_wqes, uint32_t sq_wqebbs) {
  dissect::nic::QpAttributes attributes;
  attributes.sq_wqebbs = sq_wqebbs;
  const uint32_t per_thread = total_wqes / threads;
  const size_t slots = size_t{threads} * per_thread;
  Loopback lb(attributes, slots * sizeof(uint64_t) + 4096);
  const auto qp = lb.qp();
  std::vector<std::thread> workers;
  std::vector<gda::Status> results(threads, gda::Status::ok);
  for (uint32_t t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (uint32_t k = 0; k < per_thread; ++k) {
        const size_t slot = size_t{t} * per_thread + k;
        // Every 16th WQE signalled; fetch-adds are always signalled by fetch_add(), so use writes
        // of the slot id for the rest.
        uint64_t end = 0;
        gda::FetchAddRequest r{lb.destination_address(slot * 8), lb.destination_mr.rkey, 1,
                               lb.source_address(t * 8), lb.source_mr.lkey};
        const gda::Status s = gda::fetch_add<Policy, kShared>(qp, r, &end);
        if (s != gda::Status::ok) {
          results[t] = s;
          return;
        }
      }
    });
  }
  for (auto& w : workers) w.join();
  for (uint32_t t = 0; t < threads; ++t) ASSERT_EQ(results[t], gda::Status::ok) << "thread " << t;
  ASSERT_EQ((gda::quiet<Policy, kShared>(qp, 60'000'000'000ull)), gda::Status::ok);
  const auto* counts = reinterpret_cast<const uint64_t*>(lb.destination.data());
  for (size_t slot = 0; slot < slots; ++slot) {
    ASSERT_EQ(counts[slot], 1u) << "WQE for slot " << slot << " executed " << counts[slot] << " times";
  }
  EXPECT_EQ(qp.state->resv_head, uint64_t{slots});
  EXPECT_EQ(qp.state->cons_idx, uint64_t{slots});
  const auto nic_counters = lb.softnic->counters(qp.qpn);
  EXPECT_EQ(nic_counters.wqes_executed, uint64_t{slots});
  EXPECT_LE(nic_counters.doorbells, uint64_t{slots});
}

TEST(SharedQp, TwoToSixteenThreadsLoseAndDuplicateNothing) {
  for (uint32_t threads : {2u, 3u, 4u, 8u, 16u}) {
    SCOPED_TRACE(threads);
    run_shared(threads, 1'000'000 / 5, 256);
  }
}

TEST(SharedQp, OneMillionWqesAcrossSixteenThreadsOnASmallRing) {
  run_shared(16, 1'000'000, 64);
}

}  // namespace
