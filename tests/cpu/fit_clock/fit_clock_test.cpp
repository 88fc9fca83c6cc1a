// fit-clock recovers the C and B a set of synthetic result files was made with (Table 6's
// T(f) = C/f + B), skips what it must not fit, and refuses what it cannot fit, by file and field.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dissect/bench/fit_clock.h"
#include "dissect/common/error.h"

namespace dissect::bench {
namespace {

using nlohmann::json;

// The paper's six locked clocks (Appendix B.1: 502-1,845 MHz).
const std::vector<double> CLOCKS = {502, 746, 995, 1245, 1495, 1845};

json metric(const std::string& name, const std::string& unit, double p50) {
  return {{"name", name}, {"unit", unit}, {"p50", p50}, {"spread", 0}, {"runs", json::array()}};
}

json result(const std::string& experiment, const std::string& label, const std::string& clock,
            json metrics) {
  json environment = json::object();
  if (!clock.empty()) environment["sm_clock_mhz"] = clock;
  return {{"experiment", experiment}, {"label", label}, {"environment", environment},
          {"metrics", std::move(metrics)}, {"payload_validated", true}};
}

std::string write(const std::string& name, json results) {
  const std::string path = testing::TempDir() + "/fit_clock_" + name + ".json";
  std::ofstream(path) << json{{"schema", "dissect.results/1"}, {"command", "synthetic"},
                              {"results", std::move(results)}}.dump(2);
  return path;
}

// One file per clock: issue = 2929/f + 0.27 µs (GDAKI inline issue), put+completion (in ns) =
// 5683/f + 10.30 µs; beside them a cycle count, a rate, a host result without a clock and a
// failed experiment, none of which is a point.
std::vector<std::string> synthetic_sweep() {
  std::vector<std::string> files;
  for (double f : CLOCKS) {
    json metrics = json::array({metric("issue", "us", 2929 / f + 0.27),
                                metric("put+completion", "ns", (5683 / f + 10.30) * 1e3),
                                metric("issue cycles", "cycles", 2929 + 0.27 * f),
                                metric("message rate", "Mmsg/s", f / 100)});
    json results = json::array(
        {result("gpu-latency", "inline", std::to_string(static_cast<int>(f)), metrics),
         result("latency", "inline 8 B", "", json::array({metric("issue", "us", 0.5)})),
         json{{"experiment", "gpu-rate"}, {"failed", true}, {"error", "synthetic"}}});
    files.push_back(write("sweep_" + std::to_string(static_cast<int>(f)), results));
  }
  return files;
}

const ClockCase* find(const std::vector<ClockCase>& cases, const std::string& metric) {
  for (const ClockCase& c : cases) {
    if (c.metric == metric) return &c;
  }
  return nullptr;
}

TEST(FitClock, RecoversKnownCoefficientsFromResultFiles) {
  const std::vector<ClockCase> cases = read_clock_cases(synthetic_sweep());
  ASSERT_EQ(cases.size(), 2u) << "only the timed metrics of the clocked result are cases";
  const ClockCase* issue = find(cases, "issue");
  const ClockCase* total = find(cases, "put+completion");
  ASSERT_TRUE(issue && total);
  EXPECT_EQ(issue->experiment, "gpu-latency");
  EXPECT_EQ(issue->label, "inline");
  ASSERT_EQ(issue->points.size(), CLOCKS.size());
  const ClockFit a = fit_clock(issue->points);
  EXPECT_NEAR(a.c_cycles, 2929, 1e-6);
  EXPECT_NEAR(a.b_us, 0.27, 1e-9);
  EXPECT_NEAR(a.r2, 1, 1e-12);
  EXPECT_EQ(a.clocks, 6u);
  EXPECT_EQ(a.min_mhz, 502);
  EXPECT_EQ(a.max_mhz, 1845);
  const ClockFit b = fit_clock(total->points);  // read in ns, fitted in µs
  EXPECT_NEAR(b.c_cycles, 5683, 1e-6);
  EXPECT_NEAR(b.b_us, 10.30, 1e-9);
}

TEST(FitClock, NoisyPointsLowerR2AndKeepTheLine) {
  std::vector<ClockPoint> points;
  const double noise[] = {0.02, -0.03, 0.01, -0.02, 0.03, -0.01};
  for (size_t i = 0; i < CLOCKS.size(); ++i) {
    points.push_back({CLOCKS[i], 10313 / CLOCKS[i] + 1.44 + noise[i], "synthetic"});
  }
  const ClockFit f = fit_clock(points);
  EXPECT_NEAR(f.c_cycles, 10313, 100);
  EXPECT_NEAR(f.b_us, 1.44, 0.1);
  EXPECT_LT(f.r2, 1);
  EXPECT_GT(f.r2, 0.99);
}

TEST(FitClock, RefusesFewerThanTwoDistinctClocks) {
  const std::vector<ClockPoint> one_clock = {{1980, 0.70, "a.json"}, {1980, 0.71, "b.json"}};
  try {
    fit_clock(one_clock);
    FAIL() << "one clock was fitted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("2 or more distinct SM clocks; got 1"), std::string::npos)
        << e.what();
  }
  // The command: two files at the same clock fit nothing, and say so.
  json at = json::array({result("gpu-latency", "inline", "1980", json::array({metric("issue", "us", 0.7)}))});
  const std::string a = write("same_a", at), b = write("same_b", at);
  std::vector<std::string> words = {"fit-clock", a, b};
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  EXPECT_THROW(fit_clock_main(static_cast<int>(argv.size()), argv.data()), InvalidArgument);
}

TEST(FitClock, ErrorsNameTheFileAndTheField) {
  const std::string bad = write("bad_clock", json::array({result(
      "gpu-latency", "inline", "fast", json::array({metric("issue", "us", 0.7)}))}));
  try {
    read_clock_cases({bad});
    FAIL() << "a clock of 'fast' was read";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(bad), std::string::npos) << what;
    EXPECT_NE(what.find("results[0] (gpu-latency, 'inline')"), std::string::npos) << what;
    EXPECT_NE(what.find("environment.sm_clock_mhz is 'fast'"), std::string::npos) << what;
  }
  const std::string unclocked = write("unclocked", json::array({result(
      "latency", "inline 8 B", "", json::array({metric("issue", "us", 0.5)}))}));
  try {
    read_clock_cases({unclocked});
    FAIL() << "a file without a clock gave points";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(unclocked + ": no result with environment.sm_clock_mhz"),
              std::string::npos) << e.what();
  }
  const std::string other = testing::TempDir() + "/fit_clock_other.json";
  std::ofstream(other) << R"({"schema": "dissect.telemetry/1"})";
  EXPECT_THROW(read_clock_cases({other}), Error);
  EXPECT_THROW(read_clock_cases({testing::TempDir() + "/fit_clock_absent.json"}), Error);
}

}  // namespace
}  // namespace dissect::bench
