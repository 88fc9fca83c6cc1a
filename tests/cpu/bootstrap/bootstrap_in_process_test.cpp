// Several PEs in one process, one thread each: allgather, barrier and broadcast with 1..8 PEs,
// mismatched collectives, and a PE that never arrives.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "dissect/bootstrap/in_process.h"
#include "dissect/bootstrap/peer_info.h"

namespace dissect::bootstrap {
namespace {

// Runs fn(pe) on one thread per PE; returns each thread's error text ("" = none).
template <class Fn>
std::vector<std::string> run_threads(std::vector<std::unique_ptr<Bootstrap>>& pes, Fn fn) {
  std::vector<std::string> errors(pes.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < pes.size(); ++i) {
    threads.emplace_back([&, i] {
      try {
        fn(*pes[i]);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  return errors;
}

class InProcessSizes : public ::testing::TestWithParam<int> {};

TEST_P(InProcessSizes, AllgatherBarrierBroadcastManyRounds) {
  const int n = GetParam();
  auto pes = InProcessGroup::create(n, 10);
  std::atomic<int> phase_counter{0};
  const auto errors = run_threads(pes, [&](Bootstrap& pe) {
    ASSERT_EQ(pe.world_size(), n);
    ASSERT_EQ(pe.local_rank(), pe.rank());
    ASSERT_EQ(pe.local_size(), n);
    for (uint64_t round = 0; round < 200; ++round) {
      // Variable sizes from round to round, the same on every PE.
      const size_t bytes = 1 + round % 37;
      std::vector<uint8_t> mine(bytes);
      for (size_t b = 0; b < bytes; ++b) mine[b] = static_cast<uint8_t>(pe.rank() * 31 + round + b);
      const std::vector<uint8_t> all = pe.allgather(mine.data(), bytes);
      if (all.size() != bytes * static_cast<size_t>(n)) throw Error("allgather size");
      for (int r = 0; r < n; ++r) {
        for (size_t b = 0; b < bytes; ++b) {
          if (all[static_cast<size_t>(r) * bytes + b] != static_cast<uint8_t>(r * 31 + round + b)) {
            throw Error("allgather round " + std::to_string(round) + " entry of rank " +
                        std::to_string(r) + " is wrong on rank " + std::to_string(pe.rank()));
          }
        }
      }
      // Barrier: nobody passes before everyone incremented.
      phase_counter.fetch_add(1);
      pe.barrier();
      if (phase_counter.load() < static_cast<int>((round + 1) * static_cast<uint64_t>(n))) {
        throw Error("barrier let rank " + std::to_string(pe.rank()) + " through early");
      }
      const int root = static_cast<int>(round % static_cast<uint64_t>(n));
      uint64_t value = pe.rank() == root ? 0xabc000 + round : 0;
      broadcast_value(pe, value, root);
      if (value != 0xabc000 + round) throw Error("broadcast value wrong");
      pe.barrier();  // keeps phase_counter's check exact for the next round
    }
  });
  for (int r = 0; r < n; ++r) EXPECT_EQ(errors[static_cast<size_t>(r)], "") << "rank " << r;
}

INSTANTIATE_TEST_SUITE_P(Sizes, InProcessSizes, ::testing::Values(1, 2, 3, 4, 8));

TEST(InProcess, ExchangesPeerInfoAndEndpoints) {
  const int n = 4;
  auto pes = InProcessGroup::create(n, 10);
  const auto errors = run_threads(pes, [&](Bootstrap& pe) {
    nic::QpEndpoint ep;
    ep.qpn = 0x100 + static_cast<uint32_t>(pe.rank());
    ep.nic_id = 7;
    ep.lid = static_cast<uint16_t>(pe.rank() + 1);
    ep.gid[15] = static_cast<uint8_t>(pe.rank());
    nic::MemoryRegion mr;
    mr.address = reinterpret_cast<void*>(0x10000 * (pe.rank() + 1));
    mr.length = 4096;
    mr.rkey = 0xbeef0000u + static_cast<uint32_t>(pe.rank());
    const auto infos = exchange_peer_info(pe, make_peer_info(pe, {ep}, mr, "softnic", pe.rank()));
    for (int r = 0; r < n; ++r) {
      const PeerInfo& p = infos[static_cast<size_t>(r)];
      if (p.rank != r || p.endpoint_count != 1 || p.endpoints[0].qpn != 0x100u + r ||
          p.rkey != 0xbeef0000u + r || p.address != 0x10000u * (r + 1) || p.length != 4096 ||
          p.gpu != r || std::string(p.nic) != "softnic" || from_wire(p.endpoints[0]).gid[15] != r) {
        throw Error("PeerInfo of rank " + std::to_string(r) + " wrong");
      }
    }
    // All-to-all: my QP for peer p has qpn = 1000 * me + p; peer p's QP for me is 1000 * p + me.
    std::vector<nic::QpEndpoint> mine(n);
    for (int p = 0; p < n; ++p) mine[static_cast<size_t>(p)].qpn = static_cast<uint32_t>(1000 * pe.rank() + p);
    const auto remote = exchange_qp_endpoints(pe, mine);
    for (int p = 0; p < n; ++p) {
      if (remote[static_cast<size_t>(p)].qpn != static_cast<uint32_t>(1000 * p + pe.rank())) {
        throw Error("remote endpoint from rank " + std::to_string(p) + " wrong");
      }
    }
    const auto regions = exchange_regions(pe, mr);
    for (int r = 0; r < n; ++r) {
      if (regions[static_cast<size_t>(r)].rkey != 0xbeef0000u + r) throw Error("region wrong");
    }
  });
  for (const auto& e : errors) EXPECT_EQ(e, "");
}

TEST(InProcess, MissingPeTimesOutNamingIt) {
  auto pes = InProcessGroup::create(4, 0.3);
  pes.pop_back();  // rank 3 never arrives
  const auto start = std::chrono::steady_clock::now();
  const auto errors = run_threads(pes, [](Bootstrap& pe) { pe.barrier(); });
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(took, 5.0);
  int timeouts = 0;
  for (const auto& e : errors) {
    EXPECT_NE(e.find("rank 3"), std::string::npos) << e;
    EXPECT_NE(e.find("barrier #0"), std::string::npos) << e;
    timeouts += e.find("timed out") != std::string::npos;
  }
  EXPECT_GE(timeouts, 1);
}

TEST(InProcess, MismatchedCollectivesNameBoth) {
  auto pes = InProcessGroup::create(2, 2);
  const auto errors = run_threads(pes, [](Bootstrap& pe) {
    if (pe.rank() == 0) {
      pe.barrier();
    } else {
      uint32_t v = 1;
      pe.allgather(&v, sizeof(v));
    }
  });
  // Whoever arrived second reports the mismatch; the other sees it through the broken group.
  for (const auto& e : errors) {
    EXPECT_NE(e.find("barrier #0"), std::string::npos) << e;
    EXPECT_NE(e.find("allgather #0 (4 bytes)"), std::string::npos) << e;
  }
}

TEST(InProcess, RejectsBadArguments) {
  EXPECT_THROW(InProcessGroup::create(0), InvalidArgument);
  EXPECT_THROW(InProcessGroup::create(2, 0), InvalidArgument);
  auto pes = InProcessGroup::create(1);
  uint32_t v = 0;
  EXPECT_THROW(pes[0]->broadcast(&v, sizeof(v), 1), InvalidArgument);
  EXPECT_NO_THROW(pes[0]->broadcast(&v, sizeof(v), 0));
  EXPECT_EQ(pes[0]->allgather(&v, sizeof(v)).size(), sizeof(v));
}

}  // namespace
}  // namespace dissect::bootstrap
