// gpu-rate's bottleneck (bench/gpu/rate_bound.h): the NIC model when its backlog filled what the
// submitters may leave outstanding, the submitter otherwise, whatever the rate's share of the
// ceiling; only the first may carry the words the report reads as model-bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <string>

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

}  // namespace
}  // namespace dissect::bench::gpu
