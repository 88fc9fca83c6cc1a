// Results of the suite, as printed on stdout and written as JSON (schema: docs/results.md).
//
// A Result is one configuration of one experiment: what it measured in the paper's words, on what
// (provider, engine, queue placement, PE layout, every knob), the distribution of each metric over
// independent runs, and whether the payload validated. Softnic results say so in `nic_model`.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace dissect::bench {

inline constexpr const char* SOFTNIC_MODEL =
    "softnic: a software model of the mlx5 interface, not a ConnectX";

// One run's samples: percentiles (nearest rank), and perftest's latency columns as
// print_report_lat (perftest_parameters.c) computes them:
//   the samples are sorted and the LAT_MEASURE_TAIL = 2 largest dropped (kept: n - 2, or all n
//   when n <= 2); t_typical is the median of the kept (the mean of the two middle ones when their
//   count is even); t_avg and t_stdev (population, sqrt(sum (avg - x)^2 / kept)) are over the kept;
//   t_min = sorted[0]; t_max = sorted[kept] (the smaller dropped one: only the largest sample is
//   out of sight); 99% = sorted[ceil(kept * 0.99)], 99.9% = sorted[ceil(kept * 0.999)] (indices
//   clamped to n - 1). Differences, documented in docs/results.md: perftest rounds each deviation
//   to an integer before squaring (we do not), and halves ping-pong times (rtt_factor 2); our
//   "round trip" is the whole trip.
struct Summary {
  double p10 = 0, p50 = 0, p90 = 0, p99 = 0;
  uint64_t samples = 0;
  double t_min = 0, t_max = 0, t_typical = 0, t_avg = 0, t_stdev = 0, t_p99 = 0, t_p99_9 = 0;
  bool perftest = false;    // the t_ columns were computed (summarize(); a GPU run has none)
  uint64_t dropped = 0;     // tail samples perftest drops (2, or 0 when n <= 2)
  std::vector<double> raw;  // every sample in measured order, kept only under --raw
};
inline constexpr uint64_t PERFTEST_MEASURE_TAIL = 2;  // perftest's LAT_MEASURE_TAIL
Summary summarize(std::vector<double> samples);
// --raw: summarize() keeps each run's samples, and the JSON carries them (`raw`).
void set_keep_raw_samples(bool keep);
// Metrics in a unit of time carry perftest's columns in the JSON, the CSV and the table.
bool is_time_unit(const std::string& unit);

struct Metric {
  std::string name;  // issue, put+completion, round trip, message rate, goodput
  std::string unit;  // us, Mmsg/s, GB/s
  std::vector<Summary> runs;  // one per independent run
  double p50() const;         // median over runs of each run's p50
  double spread() const;      // max - min of the runs' p50
};

struct Result {
  std::string experiment;
  std::string label;  // the row: "inline 8 B", "gpu-fence", ...
  std::string provider = "softnic";
  std::string nic_model = SOFTNIC_MODEL;
  std::string engine;      // host-thread | gpu-kernel
  std::string placement;   // host | gpu
  std::string submitter;   // host-thread | gpu-thread | proxy-worker
  std::string pe_layout;   // e.g. "2 PEs, 1 process, host"
  std::vector<std::pair<std::string, std::string>> knobs;
  std::vector<Metric> metrics;
  bool payload_validated = false;
  std::vector<std::pair<std::string, std::string>> environment;  // clocks, CPU state, ...
};

class Report {
 public:
  void add(Result result) { results_.push_back(std::move(result)); }
  const std::vector<Result>& results() const { return results_; }
  std::vector<Result>& results() { return results_; }
  // An experiment of `dissect report` that threw: recorded with its error, the others still run.
  void add_failure(std::string experiment, std::string error) {
    failures_.emplace_back(std::move(experiment), std::move(error));
  }
  const std::vector<std::pair<std::string, std::string>>& failures() const { return failures_; }
  void print_table(std::FILE* out) const;  // one line per result and metric
  std::string to_json(const std::string& command_line) const;
  void write_json(const std::string& path, const std::string& command_line) const;
  // One row per result, metric and run (docs/results.md lists the columns).
  std::string to_csv() const;
  void write_csv(const std::string& path) const;
  // Set by a rank that only served as a peer's target: main prints this line instead of a table
  // and writes no JSON (which could overwrite rank 0's on a shared file system).
  void set_served(std::string line) { served_ = std::move(line); }
  const std::string& served() const { return served_; }

 private:
  std::vector<Result> results_;
  std::vector<std::pair<std::string, std::string>> failures_;
  std::string served_;
};

// Adds every result to `report`, in order; 1 where one of them did not validate its payload (the
// experiment's exit status), else 0.
int add_results(Report& report, std::vector<Result> results);

// When more host threads spun at once than the process has usable cores (common/wait.h's census),
// every result says so in its environment ("oversubscribed") and a note is printed: its waits
// yielded on every spin, and its numbers include the time slices other spinners took.
void note_oversubscription(Report& report);

// Adds the machine (machine.h: host, cpu_model, cpu_cores, usable_cores, gpu) to every result's
// environment; a key the experiment already set (a GPU experiment's "gpu": the device it ran on)
// is kept.
void note_machine(Report& report);

}  // namespace dissect::bench
