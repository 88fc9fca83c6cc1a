// Configuration errors name the field and the value; workers are pinned where they are told.
#include <gtest/gtest.h>

#include <string>

#include "dissect/common/error.h"
#include "dissect/proxy/handoff.h"
#include "dissect/proxy/placement.h"
#include "proxy_rig.h"

namespace proxy = dissect::proxy;
using dissect::testing::count_request;
using dissect::testing::ProxyRig;

namespace {

TEST(Placement, ParsesLinuxCpuLists) {
  EXPECT_EQ(proxy::parse_cpu_list("0-3,8,10-11"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(proxy::parse_cpu_list("5"), (std::vector<int>{5}));
  EXPECT_THROW(proxy::parse_cpu_list("3-1"), dissect::InvalidArgument);
  EXPECT_THROW(proxy::parse_cpu_list("a"), dissect::InvalidArgument);
}

TEST(Placement, UnknownNicHasNoNumaNodeAndClockStateNeverThrows) {
  EXPECT_EQ(proxy::nic_numa_node("no_such_device_0"), -1);
  EXPECT_TRUE(proxy::node_cpus(-1).empty());
  const proxy::CpuClockState state = proxy::read_cpu_clock_state(0);
  EXPECT_EQ(state.cpu, 0);
  EXPECT_FALSE(state.current_khz.empty());
  EXPECT_FALSE(state.governor.empty());
}

TEST(Placement, WorkerPinnedToTheGivenCoreStillServesItsRing) {
  proxy::ProxyConfig config;
  config.cores = {0};
  ProxyRig rig(config, 4096);
  rig.proxy->start();
  const proxy::RingHandle ring = rig.proxy->ring(0);
  uint64_t index = 0;
  ASSERT_EQ(proxy::enqueue<proxy::tuned>(ring, count_request(1, 1024), &index), proxy::Status::ok);
  ASSERT_EQ(proxy::wait_completion(ring, index), proxy::Status::ok);
  const auto stats = rig.proxy->stats();
  EXPECT_EQ(stats[0].core, 0);
  EXPECT_EQ(stats[0].placement, "core 0 from cores list");
}

TEST(Placement, ImpossibleCoreIsAnErrorNamingWorkerAndCore) {
  proxy::ProxyConfig config;
  config.cores = {1000};
  ProxyRig rig(config, 4096);
  try {
    rig.proxy->start();
    FAIL() << "pinning to core 1000 succeeded";
  } catch (const dissect::Error& e) {
    EXPECT_NE(std::string(e.what()).find("worker 0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("core 1000"), std::string::npos) << e.what();
  }
}

TEST(Placement, BadConfigNamesTheFieldAndTheValue) {
  proxy::ProxyConfig config;
  config.workers = 4;
  config.rings = 2;
  try {
    proxy::validate(config);
    FAIL() << "2 rings for 4 workers accepted";
  } catch (const dissect::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("rings = 2"), std::string::npos) << e.what();
  }
  config.rings = 4;
  config.ring_entries = 1000;
  EXPECT_THROW(proxy::validate(config), dissect::InvalidArgument);
  config.ring_entries = 1024;
  config.batch = 65;
  EXPECT_THROW(proxy::validate(config), dissect::InvalidArgument);
}

}  // namespace
