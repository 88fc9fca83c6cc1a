// `dissect moe`'s results from every rank's records (moe/group.h), the same for both launch modes:
// the suite's Result per phase, DeepEP's per-rank print and pplx-kernels' TSV row.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "dissect/bench/results.h"
#include "dissect/moe/group.h"
#include "moe_rig.h"

namespace dissect::bench::moe_report {

// How the ranks were launched, for the label, the knobs and the print.
struct Launch {
  bool processes = false;        // one rank per process
  std::string bootstrap;         // "environment" or "mpi"; empty in one process
  std::string rank_source;       // who numbered the ranks: "DISSECT_RANK", "Open MPI (...)", "MPI_COMM_WORLD"
  uint32_t processes_count = 1;  // processes of the launch
  uint32_t distinct_gpus = 1;    // GPUs the ranks ran on
  std::vector<std::string> nics; // mlx5: every rank's "host:mlx5_X"; empty on the softnic
  std::string short_text() const;  // "1 process", "8 processes (environment)"
};

struct Config {
  gpu::GpuMoeOptions rig;
  uint32_t runs = 3, iterations = 50, warmup = 5;
  std::string tsv;
};

struct PhaseSeries {
  Metric latency{"latency", "us", {}}, bandwidth{"bandwidth", "GB/s", {}};
  Metric share{"issue share", "%", {}}, issue_end{"issue end", "us", {}};
  Metric post{"post time (mean warp)", "us", {}};
  std::vector<std::vector<double>> rank_latency;  // per rank, every sample of every run (avg_t)
};

// One run of every rank: records[rank][sample]. Adds the run's summaries to both phases.
void add_run(const Config& c, const std::vector<std::vector<moe::RankRecord>>& records,
             double mean_selections, PhaseSeries& dispatch, PhaseSeries& combine);

Result phase_result(const Config& c, const Launch& launch, const char* phase, const PhaseSeries& p,
                    bool valid, uint32_t qps, double mean_selections, const std::string& note,
                    std::vector<std::pair<std::string, std::string>> environment);

// DeepEP's per-rank line (test_low_latency.py), with avg_t the rank's mean over every sample.
void print_deepep(const Config& c, const Launch& launch, const std::vector<uint64_t>& selections,
                  const PhaseSeries& dispatch, const PhaseSeries& combine);

// pplx-kernels' benchmark columns, one row: latency p50 in us, bandwidth p50 in GB/s.
void write_tsv(const Config& c, const PhaseSeries& dispatch, const PhaseSeries& combine);

}  // namespace dissect::bench::moe_report
