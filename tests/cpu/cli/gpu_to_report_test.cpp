// The host side of the GPU experiments' --raw and --progress (bench/gpu/to_report.h): a run's
// samples become the JSON's `raw` in the metric's unit, and GpuProgress prints a line per run
// with an ETA once the runner planned its runs. No GPU: the samples are made up here.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "dissect/bench/gpu_experiments.h"
#include "dissect/bench/progress.h"
#include "dissect/bench/results.h"
#include "cqe_lateness.h"
#include "dissect/softnic/cqe_times.h"
#include "measurement.h"
#include "to_report.h"

namespace dissect::bench {
namespace {

gpu::TimedMetric two_runs(bool with_samples) {
  gpu::TimedMetric m{"issue", {}, {}, {}};
  m.p10_ns = {100, 200};
  m.p50_ns = {150, 250};
  m.p90_ns = {190, 290};
  if (with_samples) m.samples_ns = {{150, 100, 190}, {250, 200, 290}};
  return m;
}

nlohmann::json first_metric_json(const gpu::TimedMetric& m) {
  Result r;
  r.experiment = "gpu-latency";
  r.label = "inline";
  Metric out;
  out.name = m.name;
  out.unit = "us";
  out.runs = run_summaries(m, 3, 1e3);
  r.metrics = {out};
  Report report;
  report.add(r);
  return nlohmann::json::parse(report.to_json("dissect gpu-latency --raw"))["results"][0]["metrics"][0];
}

TEST(GpuToReport, RawSamplesReachTheJsonInTheMetricsUnitInMeasuredOrder) {
  const nlohmann::json metric = first_metric_json(two_runs(true));
  ASSERT_EQ(metric["runs"].size(), 2u);
  EXPECT_EQ(metric["runs"][0]["raw"], nlohmann::json::parse("[0.15, 0.1, 0.19]"));
  EXPECT_EQ(metric["runs"][1]["raw"], nlohmann::json::parse("[0.25, 0.2, 0.29]"));
  EXPECT_DOUBLE_EQ(metric["runs"][1]["p50"].get<double>(), 0.25);
  EXPECT_EQ(metric["runs"][0]["samples"], 3);
}

TEST(GpuToReport, WithoutRawNoSamplesAreWritten) {
  const nlohmann::json metric = first_metric_json(two_runs(false));
  for (const auto& run : metric["runs"]) EXPECT_FALSE(run.contains("raw")) << run.dump();
}

TEST(GpuToReport, ARunPerLineWithTheMeasurementAndAnEta) {
  set_progress_mode(ProgressMode::always);
  Progress progress("gpu-ordering", 0);
  PePairConfig config;
  config.runs = 2;
  bind_progress(progress, config);
  testing::internal::CaptureStderr();
  config.progress.plan(4);  // two measurements of two runs
  config.progress.measuring("ordering gpu-fence");
  config.progress.run_done(0);
  config.progress.run_done(1);
  config.progress.measuring("ordering unordered");
  config.progress.run_done(0);
  config.progress.run_done(1);
  const std::string lines = testing::internal::GetCapturedStderr();
  set_progress_mode(ProgressMode::automatic);
  EXPECT_TRUE(std::regex_search(lines, std::regex(R"(gpu-ordering \[1/4\] ordering gpu-fence, run 1/2: [0-9.]+ s, ETA )")))
      << lines;
  EXPECT_TRUE(std::regex_search(lines, std::regex(R"(gpu-ordering \[3/4\] ordering unordered, run 1/2: )"))) << lines;
  EXPECT_TRUE(std::regex_search(lines, std::regex(R"(gpu-ordering \[4/4\] ordering unordered, run 2/2: [0-9.]+ s, done)")))
      << lines;
  EXPECT_EQ(progress.finished(), 4u);
}

TEST(GpuToReport, QuietPrintsNothingButCounts) {
  set_progress_mode(ProgressMode::quiet);
  Progress progress("gpu-floor", 0);
  PePairConfig config;
  bind_progress(progress, config);
  testing::internal::CaptureStderr();
  config.progress.plan(3);
  config.progress.measuring("mechanism-floor gpu-fence");
  config.progress.run_done(0);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  set_progress_mode(ProgressMode::automatic);
  EXPECT_EQ(progress.finished(), 1u);
}

// A runner that was never bound (the standalone GPU CLI, the GPU tests) reports to nobody.
TEST(GpuToReport, AnUnboundProgressDoesNothing) {
  const PePairConfig config;
  config.progress.plan(3);
  config.progress.measuring("x");
  config.progress.run_done(0);
}

// A CQE stamped `late` ns after the cx7-ib date of a put (`pointer`, `connects`) rung at 1,000 ns.
mlx5::mlx5_cqe64 stamped_cqe(const softnic::TimingProfile& p, bool pointer, uint32_t connects, uint64_t late) {
  mlx5::mlx5_cqe64 cqe{};
  const uint64_t rung = 1000;
  const uint64_t stamp = rung + softnic::modelled_cqe_release_ns(p, pointer, connects) + late;
  cqe.timestamp = mlx5::be64::from_host(stamp);
  softnic::set_cqe_times(&cqe, stamp, rung, rung, softnic::CQE_PATH_LONE);
  return cqe;
}

// gpu-latency's `CQE after the profile's date`: each written CQE's ring-to-stamp less the date the
// profile gives a put of its kind (a DC put one connect later, a pointer put its payload read
// later), unwritten slots and CQEs without a ring date passed over; the note only past 100 ns.
TEST(GpuToReport, CqeLatenessIsTheStampLessTheProfilesDate) {
  const softnic::TimingProfile p = softnic::timing_profile("cx7-ib");
  std::vector<mlx5::mlx5_cqe64> cqes = {stamped_cqe(p, false, 0, 0), stamped_cqe(p, false, 0, 900),
                                        mlx5::mlx5_cqe64{}};
  mlx5::mlx5_cqe64 undated = stamped_cqe(p, false, 0, 0);
  softnic::set_cqe_times(&undated, 5000, 0, 0, softnic::CQE_PATH_LONE);  // no ring date kept
  cqes.push_back(undated);
  EXPECT_EQ(gpu::cqe_lateness_ns(cqes, p, false, 0), (std::vector<double>{0, 900}));
  // The same stamps judged as DC puts: the connect's 450 ns were the profile's.
  EXPECT_EQ(gpu::cqe_lateness_ns(cqes, p, false, 1), (std::vector<double>{-450, 450}));
  const std::vector<mlx5::mlx5_cqe64> pointer = {stamped_cqe(p, true, 1, 120)};
  EXPECT_EQ(gpu::cqe_lateness_ns(pointer, p, true, 1), std::vector<double>{120});
  EXPECT_EQ(gpu::late_cqe_note(100), "");
  EXPECT_NE(gpu::late_cqe_note(950).find("0.95 us after the profile's dates"), std::string::npos);
}

// A metric over other samples than the run's operations says how many (the CQEs a run left).
TEST(GpuToReport, AMetricNamesItsOwnSampleCount) {
  gpu::TimedMetric m = two_runs(false);
  m.samples_per_run = 7;
  const std::vector<Summary> runs = run_summaries(m, m.samples_per_run, 1e3);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].samples, 7u);
}

}  // namespace
}  // namespace dissect::bench
