// gpu-rate --deep-queue (bench/gpu/rate_run.h): every shape of Table 5 gets a send queue that holds
// its whole timed run, a power of two no deeper than the rig allows, and a configuration the run
// accepts; a count asked for below what fits is kept; what cannot hold one post is refused.
#include <gtest/gtest.h>

#include <string>

#include "dissect/common/error.h"
#include "rate_run.h"

namespace dissect::bench::gpu {
namespace {

RateConfig shape(uint32_t threads, uint32_t qps, uint32_t ctas, uint32_t batch, const std::string& sharing) {
  RateConfig c;
  c.threads = threads, c.qps = qps, c.ctas = ctas, c.batch = batch, c.sharing = sharing;
  return c;
}

TEST(DeepQueue, EveryTable5ShapeHoldsItsRun) {
  const RateConfig shapes[] = {
      shape(1, 1, 1, 1, "exclusive"),     shape(1, 32, 1, 1, "exclusive"),
      shape(1, 1, 1, 16, "exclusive"),    shape(32, 1, 1, 1, "handoff"),
      shape(256, 1, 1, 32, "handoff"),    shape(32, 1, 1, 32, "cooperative"),
      shape(256, 1, 1, 32, "cooperative"), shape(64, 64, 64, 16, "exclusive"),
      shape(4096, 16, 16, 32, "cooperative"), shape(16, 16, 16, 64, "exclusive"),
  };
  for (const RateConfig& given : shapes) {
    const std::string row = std::to_string(given.threads) + " threads, " + std::to_string(given.qps) +
                            " QPs, " + given.sharing;
    EXPECT_FALSE(queue_holds_run(given)) << row << ": the default run is deeper than 4,096 WQEBBs";
    const RateConfig deep = with_queue_holding_run(given);
    EXPECT_TRUE(queue_holds_run(deep)) << row;
    EXPECT_LE(deep.sq_wqebbs, MAX_SQ_WQEBBS) << row;
    EXPECT_EQ(deep.sq_wqebbs & (deep.sq_wqebbs - 1), 0u) << row << ": " << deep.sq_wqebbs;
    EXPECT_GE(deep.messages_per_thread, 1u) << row;
    EXPECT_NO_THROW(check_rate_config(deep)) << row;
    // The run fills at least a quarter of the deepest queue: cut to fit, not to nothing.
    RateConfig twice = deep;
    twice.messages_per_thread *= 8;
    EXPECT_FALSE(queue_holds_run(twice)) << row << ": " << deep.messages_per_thread << " messages a thread";
  }
}

TEST(DeepQueue, FewerMessagesThanFitAreKeptAndTheQueueFitsThem) {
  RateConfig c = shape(32, 1, 1, 32, "cooperative");
  c.messages_per_thread = 64;  // 2,048 WQEBBs on the QP
  const RateConfig deep = with_queue_holding_run(c);
  EXPECT_EQ(deep.messages_per_thread, 64u);
  EXPECT_EQ(deep.sq_wqebbs, 2048u);
  c.messages_per_thread = 100'000;
  EXPECT_EQ(with_queue_holding_run(c).messages_per_thread, MAX_SQ_WQEBBS / 32);
}

TEST(DeepQueue, WhatCannotHoldOnePostOrIsALibrarysIsRefused) {
  // 16,384 threads of one QP, 8 messages a post each (batch 256 over a warp): 131,072 WQEBBs.
  EXPECT_THROW(with_queue_holding_run(shape(16384, 1, 16, 256, "cooperative")), InvalidArgument);
  RateConfig library = shape(1, 1, 1, 1, "exclusive");
  library.path = "gdaki";
  EXPECT_THROW(with_queue_holding_run(library), InvalidArgument);
}

}  // namespace
}  // namespace dissect::bench::gpu
