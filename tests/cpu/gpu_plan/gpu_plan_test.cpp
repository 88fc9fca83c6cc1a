// gpu-load's queue layout and pacing, and gpu-goodput's 90 % point, checked on the host: the
// kernels (bench/gpu/load_kernel.cuh, load_proxy.cu) and the subcommands use these as they are.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "dissect/bench/gpu_load_plan.h"

namespace dissect::bench {
namespace {

TEST(QueueLayout, OneQueuePerProducerAndASharedProbe) {
  const QueueLayout l = make_layout(4, 0, false);
  EXPECT_EQ(l.per_endpoint, 4u);
  EXPECT_EQ(l.queues(), 8u);
  EXPECT_EQ(l.background(0, 3), 3u);
  EXPECT_EQ(l.background(1, 0), 4u);
  EXPECT_EQ(l.probe(0), 0u);  // background CTA 0's QP (Table 11's shared probe)
  EXPECT_EQ(l.probe(1), 4u);
  EXPECT_EQ(l.submitters_on(0), 2u);
  EXPECT_EQ(l.submitters_on(1), 1u);
  EXPECT_EQ(l.most_producers_per_queue(), 1u);
}

TEST(QueueLayout, ReservedProbeQueuesFollowTheBackground) {
  const QueueLayout l = make_layout(64, 16, true);
  EXPECT_EQ(l.queues(), 34u);  // T4/R32 plus two private probe rings
  EXPECT_EQ(l.probe(0), 32u);
  EXPECT_EQ(l.probe(1), 33u);
  EXPECT_EQ(l.submitters_on(32), 1u);
  EXPECT_EQ(l.submitters_on(0), 4u);
  EXPECT_EQ(l.background_producers_on(15), 4u);
  EXPECT_EQ(l.background_producers_on(32), 0u);
  EXPECT_EQ(l.slot_group(17), 1u);  // producer 17 is the second on queue 1
  EXPECT_EQ(l.most_producers_per_queue(), 4u);
}

TEST(QueueLayout, UnevenPoolAndNoBackground) {
  const QueueLayout l = make_layout(5, 2, false);
  EXPECT_EQ(l.background_producers_on(0), 3u);  // producers 0, 2, 4
  EXPECT_EQ(l.background_producers_on(1), 2u);
  const QueueLayout idle = make_layout(0, 0, false);
  EXPECT_EQ(idle.per_endpoint, 1u);
  EXPECT_EQ(idle.submitters_on(idle.probe(0)), 1u);  // the probe alone: driven exclusively
}

TEST(Pacing, ProducersTogetherCarryTheTarget) {
  // 128 warps of 32 writes at 30 Mmsg/s: each warp posts every 128 * 32 / 30 us.
  const double period = pace_period_ns(30, 128, 32);
  EXPECT_NEAR(period, 128.0 * 32 * 1e3 / 30, 1e-6);
  // Over one second, 128 producers start 1e9 / period units each: 30 M messages in all.
  EXPECT_NEAR(128 * 32 * (1e9 / period), 30e6, 1);
  EXPECT_EQ(pace_period_ns(0, 128, 32), 0);  // unpaced
  EXPECT_EQ(pace_period_ns(30, 0, 32), 0);   // no producer
}

TEST(Pacing, OnTimeProducerKeepsThePeriod) {
  PaceSchedule s(1000, 250.5);
  EXPECT_TRUE(s.due(1000));
  s.started(1000);
  EXPECT_FALSE(s.due(1250));
  EXPECT_TRUE(s.due(1251));
  s.started(1260);  // a little late: the schedule, not the start, sets the next due time
  EXPECT_DOUBLE_EQ(s.due_ns, 1501);
}

TEST(Pacing, LateProducerDropsMissedStartsInsteadOfBursting) {
  PaceSchedule s(0, 100);
  s.started(0);
  s.started(1000);  // descheduled for 9 periods
  EXPECT_DOUBLE_EQ(s.due_ns, 1000);  // one unit at once ...
  s.started(1000);
  EXPECT_DOUBLE_EQ(s.due_ns, 1100);  // ... then the period again, not 9 units back to back
  uint32_t units = 0;
  for (uint64_t t = 1001; t < 2000; ++t) {
    if (s.due(t)) s.started(t), ++units;
  }
  EXPECT_EQ(units, 9u);  // 1100, 1200, ..., 1900: one unit per 100 ns
}

TEST(Pacing, UnpacedIsAlwaysDue) {
  PaceSchedule s(5000, 0);
  EXPECT_TRUE(s.due(0));
}

TEST(Carried, ExcludesTheProbeOnlyWhereItShares) {
  EXPECT_DOUBLE_EQ(carried_mmsgs(100, 1'000'100, 2000, false, 1'000'000), 1000);  // 1e6 in 1 ms
  EXPECT_DOUBLE_EQ(carried_mmsgs(100, 1'000'100, 2000, true, 1'000'000), 998);
  EXPECT_DOUBLE_EQ(carried_mmsgs(0, 10, 20, true, 1000), 0);  // never negative
  EXPECT_DOUBLE_EQ(carried_mmsgs(0, 10, 0, false, 0), 0);     // no window
}

TEST(Goodput, FirstSizeReaching90Percent) {
  const std::vector<double> g = {1, 5, 20, 22.4, 23, 24};
  EXPECT_EQ(first_size_reaching(g, 24.8), 3);  // 22.4 >= 22.32
  EXPECT_EQ(first_size_reaching(g, 30), -1);
  EXPECT_EQ(first_size_reaching(g, 0), -1);    // no reference
  EXPECT_EQ(first_size_reaching({}, 24.8), -1);
}

TEST(Goodput, Figure8SizesIncludeTheFp8Token) {
  const std::vector<uint64_t> s = figure8_sizes();
  EXPECT_EQ(s.front(), 8u);
  EXPECT_EQ(s.back(), 32768u);
  EXPECT_EQ(s.size(), 14u);  // 8 B .. 32 KiB by doubling (13) and 7,168 B
  for (size_t i = 1; i < s.size(); ++i) EXPECT_LT(s[i - 1], s[i]);
  EXPECT_NE(std::find(s.begin(), s.end(), 7168u), s.end());
}

TEST(Goodput, MessagesPerProducer) {
  EXPECT_EQ(messages_per_producer(1u << 20, 1u << 30, 1024, 4), 256u);
  EXPECT_EQ(messages_per_producer(1ull << 30, 1000, 8, 4), 250u);  // capped in all
  EXPECT_EQ(messages_per_producer(1024, 1u << 30, 32768, 4), 64u);  // at least 64
  EXPECT_EQ(messages_per_producer(1024, 1u << 30, 32768, 4, 8), 8u);
}

}  // namespace
}  // namespace dissect::bench
