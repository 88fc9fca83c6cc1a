// Ring memory comes from the injected allocators and goes back to them; injected completion
// counters (GPU-resident ones on a GPU machine) are the ones the worker advances.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <set>

#include "dissect/proxy/handoff.h"
#include "proxy_rig.h"

namespace proxy = dissect::proxy;
using dissect::testing::count_request;
using dissect::testing::ProxyRig;

namespace {

struct CountingAllocator {
  std::set<void*> live;
  uint64_t allocations = 0;
  proxy::Allocator make(bool host_readable) {
    proxy::Allocator a;
    a.allocate = [this](size_t bytes) {
      void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
      std::memset(p, 0, (bytes + 63) / 64 * 64);
      live.insert(p);
      ++allocations;
      return p;
    };
    a.release = [this](void* p) {
      live.erase(p);
      std::free(p);
    };
    a.host_readable = host_readable;
    return a;
  }
};

TEST(Memory, RingsComeFromAndReturnToTheInjectedAllocators) {
  CountingAllocator shared, producer;
  {
    proxy::ProxyConfig config;
    config.rings = 3;
    config.pin = false;
    config.memory.shared = shared.make(true);
    config.memory.producer = producer.make(false);  // as cudaMalloc'd memory: the worker never reads it
    ProxyRig rig(config, 4096);
    EXPECT_EQ(producer.allocations, 3u);
    EXPECT_GE(shared.allocations, 3u * 3);
    const proxy::RingHandle ring = rig.proxy->ring(2);
    uint64_t index = 0;
    for (uint32_t k = 0; k < 4; ++k) {
      ASSERT_EQ(proxy::enqueue<proxy::tuned>(ring, count_request(k, 1024), &index), proxy::Status::ok);
    }
    const proxy::ShutdownReport report = rig.proxy->stop(proxy::StopMode::abandon);
    ASSERT_EQ(report.pending.size(), 1u);
    EXPECT_EQ(report.pending[0].reserved, 4u) << "without a readable head, reserved = published";
  }
  EXPECT_TRUE(shared.live.empty());
  EXPECT_TRUE(producer.live.empty());
}

TEST(Memory, InjectedCompletionCountersAreTheOnesAdvanced) {
  alignas(64) uint64_t counters[2] = {0, 0};
  proxy::ProxyConfig config;
  config.rings = 2;
  config.pin = false;
  config.completion_counters = counters;
  config.completion_counters_for_producer = counters;
  ProxyRig rig(config, 4096);
  rig.proxy->start();
  const proxy::RingHandle ring = rig.proxy->ring(1);
  EXPECT_EQ(ring.completed, &counters[1]);
  uint64_t index = 0;
  for (uint32_t k = 0; k < 7; ++k) {
    ASSERT_EQ(proxy::enqueue<proxy::tuned>(ring, count_request(k, 1024), &index), proxy::Status::ok);
  }
  ASSERT_EQ(proxy::wait_completion(ring, index), proxy::Status::ok);
  EXPECT_EQ(__atomic_load_n(&counters[1], __ATOMIC_ACQUIRE), 7u);
  EXPECT_EQ(counters[0], 0u);
}

}  // namespace
