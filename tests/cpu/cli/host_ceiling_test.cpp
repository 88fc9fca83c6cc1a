// host-nic-ceiling's measurement (bench/cpu/host_ceiling.h): every pre-built write lands, the rate
// is a rate, a depth the batching cannot split is refused by name, and the cached ceiling is
// measured once per configuration.
#include <gtest/gtest.h>

#include <string>

#include "dissect/common/error.h"
#include "host_ceiling.h"

namespace dissect::bench {
namespace {

TEST(HostCeiling, EveryWriteLandsAndTheRateIsPositive) {
  const HostCeilingPoint p = measure_host_engine_ceiling(2, 3, 64, 2, "fast");
  EXPECT_TRUE(p.validated);
  EXPECT_GT(p.mmsgs, 0);
}

TEST(HostCeiling, DepthNotAMultipleOfTheBatchIsRefusedByName) {
  try {
    measure_host_engine_ceiling(1, 1, 40, 1, "fast");
    FAIL() << "depth 40 accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("depth 40"), std::string::npos) << e.what();
  }
}

TEST(HostCeiling, UnknownProfileIsRefused) {
  EXPECT_THROW(measure_host_engine_ceiling(1, 1, 64, 1, "no-such-profile"), InvalidArgument);
}

TEST(HostCeiling, CachedCeilingIsMeasuredOnce) {
  const double first = host_engine_ceiling(1, 1, "fast");
  EXPECT_GT(first, 0);
  EXPECT_EQ(host_engine_ceiling(1, 1, "fast"), first);
}

}  // namespace
}  // namespace dissect::bench
