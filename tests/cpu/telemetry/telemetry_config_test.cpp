// DISSECT_TELEMETRY_* parsing.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "dissect/telemetry/config.h"

namespace dissect::telemetry {
namespace {

EnvironmentLookup fake(std::map<std::string, std::string> variables) {
  return [variables = std::move(variables)](const char* name) -> const char* {
    auto found = variables.find(name);
    return found == variables.end() ? nullptr : found->second.c_str();
  };
}

int count_lines(const std::string& text) {
  int lines = 0;
  for (char c : text) lines += c == '\n';
  return lines;
}

TEST(TelemetryConfig, DefaultsMatchThePage) {
  Config config = parse_config(fake({{"DISSECT_TELEMETRY_ENABLE", "1"}}));
  EXPECT_TRUE(config.enabled);
  EXPECT_EQ(config.output_dir, "/tmp");
  EXPECT_EQ(config.histogram_buckets, 5u);
  EXPECT_EQ(config.histogram_interval_ns, 30000u);
  EXPECT_EQ(config.latency_sample, 1u);
  EXPECT_TRUE(config.hw_counters.empty());
  EXPECT_EQ(config.sample_ms, 0u);
  EXPECT_FALSE(config.debug);
}

TEST(TelemetryConfig, OnlyExactlyOneEnables) {
  for (const char* value : {"0", "true", "yes", "1 ", " 1", "01", ""}) {
    EXPECT_FALSE(parse_config(fake({{"DISSECT_TELEMETRY_ENABLE", value}})).enabled) << "'" << value << "'";
  }
  EXPECT_FALSE(parse_config(fake({})).enabled);
}

TEST(TelemetryConfig, ReadsEveryVariable) {
  Config config = parse_config(fake({{"DISSECT_TELEMETRY_ENABLE", "1"},
                                     {"DISSECT_TELEMETRY_OUTPUT_DIR", "/results"},
                                     {"DISSECT_TELEMETRY_HISTOGRAM_BUCKETS", "16"},
                                     {"DISSECT_TELEMETRY_HISTOGRAM_INTERVAL_NS", "1000"},
                                     {"DISSECT_TELEMETRY_LATENCY_SAMPLE", "16"},
                                     {"DISSECT_TELEMETRY_HW_COUNTERS", "cnp_sent, ecn_marked_pkts,,"},
                                     {"DISSECT_TELEMETRY_SAMPLE_MS", "10"},
                                     {"DISSECT_TELEMETRY_DEBUG", ""}}));
  EXPECT_EQ(config.output_dir, "/results");
  EXPECT_EQ(config.histogram_buckets, 16u);
  EXPECT_EQ(config.histogram_interval_ns, 1000u);
  EXPECT_EQ(config.latency_sample, 16u);
  EXPECT_EQ(config.hw_counters, (std::vector<std::string>{"cnp_sent", "ecn_marked_pkts"}));
  EXPECT_TRUE(config.counter_allowed("cnp_sent"));
  EXPECT_FALSE(config.counter_allowed("out_of_buffer"));
  EXPECT_EQ(config.sample_ms, 10u);
  EXPECT_TRUE(config.debug);
}

TEST(TelemetryConfig, LatencySampleSixRunsAtEightWithExactlyOneLine) {
  testing::internal::CaptureStderr();
  Config config = parse_config(fake({{"DISSECT_TELEMETRY_ENABLE", "1"}, {"DISSECT_TELEMETRY_LATENCY_SAMPLE", "6"}}));
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(config.latency_sample, 8u);
  EXPECT_EQ(count_lines(err), 1) << err;
  EXPECT_NE(err.find("LATENCY_SAMPLE=6"), std::string::npos) << err;
  EXPECT_NE(err.find("using 8"), std::string::npos) << err;
}

TEST(TelemetryConfig, PowersOfTwoAreSilent) {
  testing::internal::CaptureStderr();
  Config config = parse_config(fake({{"DISSECT_TELEMETRY_ENABLE", "1"}, {"DISSECT_TELEMETRY_LATENCY_SAMPLE", "64"}}));
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(config.latency_sample, 64u);
}

TEST(TelemetryConfig, BadValuesFallBackToDefaultsWithOneLineEach) {
  testing::internal::CaptureStderr();
  Config config = parse_config(fake({{"DISSECT_TELEMETRY_ENABLE", "1"},
                                     {"DISSECT_TELEMETRY_HISTOGRAM_BUCKETS", "17"},
                                     {"DISSECT_TELEMETRY_HISTOGRAM_INTERVAL_NS", "abc"},
                                     {"DISSECT_TELEMETRY_LATENCY_SAMPLE", "0"}}));
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(config.histogram_buckets, 5u);
  EXPECT_EQ(config.histogram_interval_ns, 30000u);
  EXPECT_EQ(config.latency_sample, 1u);
  EXPECT_EQ(count_lines(err), 3) << err;
  EXPECT_NE(err.find("HISTOGRAM_BUCKETS='17'"), std::string::npos) << err;
}

TEST(TelemetryConfig, OverlongOutputDirKeepsTelemetryOff) {
  testing::internal::CaptureStderr();
  Config config = parse_config(fake({{"DISSECT_TELEMETRY_ENABLE", "1"},
                                     {"DISSECT_TELEMETRY_OUTPUT_DIR", std::string(kMaxOutputDirLength + 1, 'd')}}));
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(config.enabled);
  EXPECT_EQ(count_lines(err), 1) << err;
}

TEST(TelemetryConfig, RoundUpToPowerOfTwo) {
  EXPECT_EQ(round_up_to_power_of_two(1), 1u);
  EXPECT_EQ(round_up_to_power_of_two(2), 2u);
  EXPECT_EQ(round_up_to_power_of_two(3), 4u);
  EXPECT_EQ(round_up_to_power_of_two(6), 8u);
  EXPECT_EQ(round_up_to_power_of_two(1025), 2048u);
  EXPECT_EQ(round_up_to_power_of_two(kMaxLatencySample), kMaxLatencySample);
}

}  // namespace
}  // namespace dissect::telemetry
