// gpu-rate's telemetry cost beside each counted row (bench/gpu/telemetry_cost.h): the row names
// its rate against the same point's off row, judges the 5 % goal only where the off row was the
// submitter's, and says why the mode costs what it does.
#include <gtest/gtest.h>

#include "dissect/common/error.h"
#include "telemetry_cost.h"

namespace dissect::bench::gpu {
namespace {

Result row(double mmsgs, const std::string& bottleneck) {
  Result r;
  r.metrics.push_back(Metric{"message rate", "Mmsg/s", {summarize({mmsgs})}});
  r.knobs.push_back({"bottleneck", bottleneck});
  return r;
}

std::string knob(const Result& r, const std::string& name) {
  for (const auto& [key, value] : r.knobs) {
    if (key == name) return value;
  }
  return "<absent>";
}

const std::vector<TelemetryRowMode> MODES = {{false, 0}, {true, 0}, {true, 16}};
const std::string SUBMITTER = "submitter (rate below 80 % of the ceiling)";

TEST(TelemetryCost, EachCountedRowNamesItsRateAgainstThePointsOffRow) {
  std::vector<Result> rows = {row(63.48, SUBMITTER), row(63.86, SUBMITTER), row(29.49, SUBMITTER)};
  annotate_telemetry_cost(rows, 0, MODES);
  EXPECT_EQ(knob(rows[0], "telemetry cost vs off"), "<absent>");  // the reference itself
  EXPECT_EQ(knob(rows[1], "telemetry cost vs off").substr(0, 6), "+0.6 %");
  EXPECT_EQ(knob(rows[2], "telemetry cost vs off").substr(0, 7), "-53.5 %");
  EXPECT_EQ(knob(rows[1], "telemetry cost goal").substr(0, 3), "yes");
  EXPECT_EQ(knob(rows[2], "telemetry cost goal").substr(0, 2), "no");
  EXPECT_NE(knob(rows[2], "telemetry cost why").find("1 WQE in 16"), std::string::npos);
  EXPECT_NE(knob(rows[1], "telemetry cost why").find("untaken branch"), std::string::npos);
}

TEST(TelemetryCost, AModelBoundOffRowIsNotJudged) {
  std::vector<Result> rows = {row(270, "NIC model (rate >= 80 % of its ceiling)"), row(268, SUBMITTER),
                              row(120, SUBMITTER)};
  annotate_telemetry_cost(rows, 0, MODES);
  EXPECT_EQ(knob(rows[2], "telemetry cost goal").substr(0, 10), "not judged");
}

TEST(TelemetryCost, PointsAreAnnotatedEachAgainstTheirOwnOffRow) {
  // Two points after an unrelated earlier result (first = 1).
  std::vector<Result> rows = {row(1, SUBMITTER), row(10, SUBMITTER), row(9.8, SUBMITTER), row(5, SUBMITTER),
                              row(100, SUBMITTER), row(99, SUBMITTER), row(50, SUBMITTER)};
  annotate_telemetry_cost(rows, 1, MODES);
  EXPECT_EQ(knob(rows[0], "telemetry cost vs off"), "<absent>");
  EXPECT_EQ(knob(rows[3], "telemetry cost vs off").substr(0, 7), "-50.0 %");
  EXPECT_EQ(knob(rows[6], "telemetry cost vs off").substr(0, 7), "-50.0 %");
  EXPECT_EQ(knob(rows[5], "telemetry cost goal").substr(0, 3), "yes");
}

TEST(TelemetryCost, ARowWithoutARateSaysSoAndRowsThatAreNotWholePointsAreRefused) {
  std::vector<Result> rows = {row(10, SUBMITTER), Result{}, row(5, SUBMITTER)};
  annotate_telemetry_cost(rows, 0, MODES);
  EXPECT_EQ(knob(rows[1], "telemetry cost vs off"), "not measured: this row has no rate");
  std::vector<Result> partial = {row(10, SUBMITTER), row(9, SUBMITTER)};
  EXPECT_THROW(annotate_telemetry_cost(partial, 0, MODES), InvalidArgument);
}

TEST(TelemetryCost, WithoutAnOffRowNothingIsAdded) {
  std::vector<Result> rows = {row(10, SUBMITTER), row(5, SUBMITTER)};
  annotate_telemetry_cost(rows, 0, {{true, 0}, {true, 16}});
  EXPECT_EQ(knob(rows[1], "telemetry cost vs off"), "<absent>");
}

}  // namespace
}  // namespace dissect::bench::gpu
