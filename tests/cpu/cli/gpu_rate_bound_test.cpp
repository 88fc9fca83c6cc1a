// gpu-rate's bottleneck (bench/gpu/rate_bound.h): the NIC model when its backlog filled what the
// submitters may leave outstanding, the submitter otherwise, whatever the rate's share of the
// ceiling; only the first may carry the words the report reads as model-bound. And the mini-proxy's
// (bench/gpu/proxy_bound.h): the profile's latency over the workers' send queues is the emulated
// NIC's bound, not the model's, only where the rate reaches what those queues hold in flight.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <string>

#include "dissect/softnic/profile.h"
#include "proxy_bound.h"
#include "rate_bound.h"

namespace dissect::bench::gpu {
namespace {

// scripts/dissect_report/results.py, MODEL_WORDS.
bool names_the_model(std::string note) {
  std::transform(note.begin(), note.end(), note.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* word : {"softnic", "model", "engine"}) {
    if (note.find(word) != std::string::npos) return true;
  }
  return false;
}

TEST(RateBound, AFilledBacklogNamesTheModelAtAnyShareOfTheCeiling) {
  const std::string low = rate_bottleneck(5, 100, RateBacklog{4090, 4096});
  EXPECT_EQ(low.rfind("NIC model", 0), 0u) << low;
  EXPECT_NE(low.find("4090 of 4096 WQEBBs"), std::string::npos) << low;
  EXPECT_NE(low.find("rate 5.0 %"), std::string::npos) << low;
  EXPECT_EQ(rate_bottleneck(99, 100, RateBacklog{2048, 4096}).rfind("NIC model", 0), 0u);
  EXPECT_EQ(rate_bottleneck(10, 100, RateBacklog{512, 1024}).rfind("NIC model", 0), 0u);  // a library's limit
}

TEST(RateBound, ABacklogThatNeverFilledNamesTheSubmitterWithoutTheModelsWords) {
  const std::string high = rate_bottleneck(85, 100, RateBacklog{160, 4096});
  EXPECT_EQ(high.rfind("submitter", 0), 0u) << high;
  EXPECT_FALSE(names_the_model(high)) << high;
  EXPECT_NE(high.find("160 of 4096 WQEBBs"), std::string::npos) << high;
  EXPECT_NE(high.find("85 %"), std::string::npos) << high;
  EXPECT_EQ(rate_bottleneck(1, 100, RateBacklog{2047, 4096}).rfind("submitter", 0), 0u);
  EXPECT_TRUE(names_the_model(rate_bottleneck(1, 100, RateBacklog{2048, 4096})));
}

// A queue that holds the run: how far the model fell behind, as a share of the run, decides (the
// drain cannot: the submitters reclaim every CQE after their last post).
TEST(RateBound, AHeldRunIsTheModelsWhenItFellASixteenthOfTheRunBehind) {
  const std::string slow = held_run_bottleneck(19, 22.6, 12128, 32768);
  EXPECT_EQ(slow.rfind("NIC model", 0), 0u) << slow;
  EXPECT_NE(slow.find("12128 WQEBBs behind"), std::string::npos) << slow;
  EXPECT_NE(slow.find("37 % of the run's 32768"), std::string::npos) << slow;
  EXPECT_NE(slow.find("rate 84 %"), std::string::npos) << slow;
  EXPECT_EQ(held_run_bottleneck(20, 22.6, 2048, 32768).rfind("NIC model", 0), 0u);
  const std::string kept_up = held_run_bottleneck(6.8, 22.6, 2047, 32768);
  EXPECT_EQ(kept_up.rfind("submitter", 0), 0u) << kept_up;
  EXPECT_FALSE(names_the_model(kept_up)) << kept_up;
  EXPECT_NE(kept_up.find("at most 2047 WQEBBs"), std::string::npos) << kept_up;
}

// cx7-ib: an 8 B pointer write holds its WQEBB 2,725 + 610 + 575 = 3,910 ns, so 4 queues of 32
// WQEBBs carry at most 4 * 32 / 3.91 us = 32.7 Mmsg/s; `fast` has no latency and no such bound.
TEST(ProxyBound, TheSendQueuesInFlightBoundIsLittlesLawOverTheProfilesLatency) {
  const softnic::TimingProfile cx7 = softnic::timing_profile("cx7-ib");
  EXPECT_NEAR(in_flight_bound_mmsgs(WorkerQueues{4, 32}, cx7), 4 * 32 / 3.910, 1e-9);
  EXPECT_NEAR(in_flight_bound_mmsgs(WorkerQueues{4, 16}, cx7), 4 * 16 / 3.910, 1e-9);
  EXPECT_EQ(in_flight_bound_mmsgs(WorkerQueues{4, 32}, softnic::timing_profile("fast")), 0);
}

TEST(ProxyBound, FullSendQueuesAreTheProfilesLatencyOnlyAtTheirInFlightBound) {
  const softnic::TimingProfile cx7 = softnic::timing_profile("cx7-ib");
  const WorkerPasses full{16, 5, 95};
  // 28 of the 32.7 the queues hold in flight, the host engine (ceiling 40) at 70 %: the latency's.
  const std::string latency = proxy_bottleneck(28, 40, full, cx7, WorkerQueues{4, 32});
  EXPECT_EQ(latency.rfind("the cx7-ib profile's completion latency", 0), 0u) << latency;
  EXPECT_NE(latency.find("4 x 32 WQEBBs in flight, 32.7 Mmsg/s"), std::string::npos) << latency;
  EXPECT_FALSE(names_the_model(latency)) << latency;
  // The same rate on queues of 256 WQEBBs (262 Mmsg/s in flight): the engine completed too slowly.
  EXPECT_TRUE(names_the_model(proxy_bottleneck(28, 40, full, cx7, WorkerQueues{4, 256})));
  // At 80 % of the host engine's ceiling the engine is named whatever the queues hold.
  EXPECT_TRUE(names_the_model(proxy_bottleneck(33, 40, full, cx7, WorkerQueues{4, 32})));
  // Under fast (no latency) full queues are always the engine's.
  EXPECT_TRUE(names_the_model(proxy_bottleneck(28, 40, full, softnic::timing_profile("fast"), WorkerQueues{4, 32})));
  // Queues that were not full: the workers or the producers, never the latency.
  const std::string producers = proxy_bottleneck(28, 40, WorkerPasses{3, 10, 20}, cx7, WorkerQueues{4, 32});
  EXPECT_EQ(producers.rfind("GPU producers", 0), 0u) << producers;
}

}  // namespace
}  // namespace dissect::bench::gpu
