#include "moe_report.h"

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "dissect/common/error.h"
#include "dissect/softnic/profile.h"

namespace dissect::bench::moe_report {
namespace {

// What the results stand beside: DeepEP's README (low-latency kernels, EP8, H800 with CX-7
// InfiniBand 400 Gb/s, 128 tokens, hidden 7,168, top-8, FP8 dispatch, BF16 combine) and the paper.
constexpr double DEEPEP_EP8_DISPATCH_US = 77, DEEPEP_EP8_COMBINE_US = 114;
constexpr double PAPER_ISSUE_US = 25, PAPER_DISPATCH_MS = 0.49;

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / v.size();
}

// One phase's per-sample series of one run.
struct RunSeries {
  std::vector<double> latency, share, end, post;
  void add(double us, const moe::IssueSummary& issue) {
    latency.push_back(us);
    share.push_back(100 * issue.share);
    end.push_back(issue.end_us);
    post.push_back(issue.post_us);
  }
};

void add_series(PhaseSeries& p, const RunSeries& run, double bytes_per_rank) {
  std::vector<double> bandwidth;
  for (double us : run.latency) bandwidth.push_back(bytes_per_rank / 1e9 / (us * 1e-6));
  p.latency.runs.push_back(summarize(run.latency));
  p.bandwidth.runs.push_back(summarize(bandwidth));
  p.share.runs.push_back(summarize(run.share));
  p.issue_end.runs.push_back(summarize(run.end));
  p.post.runs.push_back(summarize(run.post));
}

}  // namespace

std::string Launch::short_text() const {
  if (!processes) return "1 process";
  return std::to_string(processes_count) + " processes (" + bootstrap + ")";
}

void add_run(const Config& c, const std::vector<std::vector<moe::RankRecord>>& records,
             double mean_selections, PhaseSeries& dispatch, PhaseSeries& combine) {
  const size_t samples = records.empty() ? 0 : records[0].size();
  RunSeries d, m;
  for (size_t i = 0; i < samples; ++i) {
    const moe::MergedSample s = moe::merge_sample(records, i);
    d.add(s.dispatch_us, moe::summarize_issue(s.dispatch));
    m.add(s.combine_us, moe::summarize_issue(s.combine));
  }
  for (PhaseSeries* p : {&dispatch, &combine}) p->rank_latency.resize(records.size());
  for (size_t r = 0; r < records.size(); ++r) {
    for (const moe::RankRecord& one : records[r]) {
      dispatch.rank_latency[r].push_back(one.dispatch_us);
      combine.rank_latency[r].push_back(one.combine_us);
    }
  }
  add_series(dispatch, d, mean_selections * moe::dispatch_message_bytes(c.rig.shape));
  add_series(combine, m, mean_selections * moe::combine_message_bytes(c.rig.shape));
}

Result phase_result(const Config& c, const Launch& launch, const char* phase, const PhaseSeries& p,
                    bool valid, uint32_t qps, double mean_selections, const std::string& note,
                    std::vector<std::pair<std::string, std::string>> environment) {
  const moe::MoeShape& s = c.rig.shape;
  const bool gda = c.rig.transport == gpu::MoeTransportKind::mini_gda;
  const bool mlx5 = c.rig.provider == "mlx5";
  Result r;
  r.experiment = "moe";
  r.label = std::string(phase) + ", " + std::to_string(s.ranks) + " ranks, " + std::to_string(s.tokens) +
            " tokens, " + launch.short_text();
  r.engine = mlx5 ? "none (the NIC executes the WQEs)" : "gpu-kernel";
  if (mlx5) {
    r.provider = "mlx5";
    r.nic_model = "ConnectX through rdma-core (" + c.rig.mlx5.nic + " on rank 0): GPU-resident DEVX queues, " +
                  (c.rig.mlx5.cpu_assisted ? "CPU-assisted doorbells" : "the UAR mapped into the GPU");
  }
  r.placement = "gpu";
  r.submitter = gda ? "gpu-warp" : "proxy-worker";
  r.pe_layout = std::to_string(s.ranks) + " PEs, " +
                (launch.processes ? std::to_string(launch.processes_count) + " processes" : std::string("1 process")) +
                ", " + std::to_string(launch.distinct_gpus) + (launch.distinct_gpus == 1 ? " GPU" : " GPUs");
  const char* timing = launch.processes
      ? "each rank: CUDA events around its own kernel, a bootstrap barrier and an L2 flush (256 MB) "
        "before it; the phase's sample is the slowest rank's; issue share from globaltimer stamps"
      : "CUDA events around one kernel of every rank, L2 flushed (256 MB) before it; "
        "issue share from globaltimer stamps";
  r.knobs = {{"phase", phase}, {"transport", gpu::to_string(c.rig.transport)},
             {"launch", launch.processes ? "one rank per process (" + launch.bootstrap + " bootstrap, ranks from " +
                                               launch.rank_source +
                                               (mlx5 ? ", arenas registered with each rank's ConnectX)" : ", CUDA IPC arenas)")
                                         : std::string("every rank in one process")},
             {"ordering", mlx5 ? "system-release-store" : gda ? "gpu-release-store" : "tuned handoff, shared rings"},
             {"hidden", std::to_string(s.hidden)}, {"top_k", std::to_string(s.top_k)},
             {"experts", std::to_string(s.experts)}, {"tokens", std::to_string(s.tokens)},
             {"ranks", std::to_string(s.ranks)}, {"seed", std::to_string(c.rig.routing.seed)},
             {"masked_fraction", std::to_string(c.rig.routing.masked_fraction)},
             {"unmasked_selections_per_rank", std::to_string(mean_selections) + " of " +
                                                  std::to_string(s.tokens * s.top_k)},
             {"doorbell_batch", std::to_string(c.rig.doorbell_batch)},
             {"warps_per_rank", std::to_string(c.rig.warps_per_rank)}, {"qps", std::to_string(qps)},
             {"iterations", std::to_string(c.iterations)}, {"warmup", std::to_string(c.warmup)},
             {"message_bytes", std::to_string(std::string(phase) == "dispatch" ? moe::dispatch_message_bytes(s)
                                                                            : moe::combine_message_bytes(s))},
             {"engine_warps", std::to_string(c.rig.engine_ctas) + " CTAs x " + std::to_string(c.rig.engine_warps_per_cta) + " warps"},
             {"nic_profile", mlx5 ? "" : softnic::profile_name(softnic::timing_profile(c.rig.nic_profile))},
             {"issue share", "(last post end - first warp start) / (last warp end - first warp start) per rank, "
                             "mean over ranks; post time: the mean warp's time inside the post calls"},
             {"timing", timing}};
  // The softnic's knobs for its results only: a ConnectX has no engine and its times are its own.
  if (mlx5) {
    r.knobs.erase(std::remove_if(r.knobs.begin(), r.knobs.end(),
                                 [](const auto& k) { return k.first == "engine_warps" || k.first == "nic_profile"; }),
                  r.knobs.end());
    std::string nics;
    for (const std::string& n : launch.nics) nics += (nics.empty() ? "" : ",") + n;
    r.knobs.push_back({"nic", c.rig.mlx5.nic});
    r.knobs.push_back({"rank nics", nics});
    r.knobs.push_back({"gid_index", std::to_string(c.rig.mlx5.gid_index)});
    r.knobs.push_back({"doorbell", c.rig.mlx5.cpu_assisted ? "cpu-assisted" : "direct"});
  }
  if (!gda) {
    const uint32_t per_process = launch.processes ? s.ranks : s.ranks * s.ranks;
    r.knobs.push_back({"proxy_workers", std::to_string(per_process) + " CPU threads per process (a worker per "
                                        "rank and destination), unpinned, tuned handoff"});
  }
  if (launch.processes && launch.distinct_gpus < launch.processes_count) {
    r.knobs.push_back({"time slicing", std::to_string(launch.processes_count) + " processes on " +
                                           std::to_string(launch.distinct_gpus) +
                                           " GPU(s) time-slice it: the times include the slices"});
  }
  r.knobs.push_back({"beside", "DeepEP EP8 (H800 + CX-7 400 Gb/s): dispatch 77 us, combine 114 us; "
                               "paper: issue 25 us of a 0.49 ms dispatch"});
  if (!note.empty()) r.knobs.push_back({"note", note});
  r.metrics = {p.latency, p.bandwidth, p.share, p.issue_end, p.post};
  r.payload_validated = valid;
  r.environment = std::move(environment);
  return r;
}

void print_deepep(const Config& c, const Launch& launch, const std::vector<uint64_t>& selections,
                  const PhaseSeries& d, const PhaseSeries& m) {
  const moe::MoeShape& s = c.rig.shape;
  const std::string nic = c.rig.provider == "mlx5" ? "mlx5: a ConnectX per rank, rank 0 on " + c.rig.mlx5.nic
                                                   : std::string("softnic: a model, not a ConnectX");
  std::printf("moe: DeepEP low-latency, %u ranks, %s on %u GPU(s) (%s), transport %s\n", s.ranks,
              launch.short_text().c_str(), launch.distinct_gpus, nic.c_str(), gpu::to_string(c.rig.transport));
  for (uint32_t r = 0; r < s.ranks; ++r) {
    const double dt = mean(d.rank_latency.at(r)), ct = mean(m.rank_latency.at(r));
    const double db = double(selections[r]) * moe::dispatch_message_bytes(s) / 1e9 / (dt * 1e-6);
    const double cb = double(selections[r]) * moe::combine_message_bytes(s) / 1e9 / (ct * 1e-6);
    std::printf("[rank %u] Dispatch bandwidth: %.2f GB/s, avg_t=%.2f us | Combine bandwidth: %.2f GB/s, "
                "avg_t=%.2f us\n", r, db, dt, cb, ct);
  }
  std::printf("issue share (p50 over runs): dispatch %.1f%% (last post %.2f us in, mean warp posting %.2f us), "
              "combine %.1f%% (last post %.2f us in, mean warp posting %.2f us)\n", d.share.p50(),
              d.issue_end.p50(), d.post.p50(), m.share.p50(), m.issue_end.p50(), m.post.p50());
  std::printf("beside: DeepEP's published EP8 (H800 + CX-7 400 Gb/s, 8 GPUs): dispatch %.0f us, combine "
              "%.0f us; the paper: issue %.0f us of a %.2f ms dispatch (%.1f%%)\n", DEEPEP_EP8_DISPATCH_US,
              DEEPEP_EP8_COMBINE_US, PAPER_ISSUE_US, PAPER_DISPATCH_MS, 100 * PAPER_ISSUE_US / (PAPER_DISPATCH_MS * 1e3));
}

void write_tsv(const Config& c, const PhaseSeries& d, const PhaseSeries& m) {
  std::ofstream out(c.tsv);
  if (!out) throw InvalidArgument("--tsv '" + c.tsv + "' cannot be written");
  const moe::MoeShape& s = c.rig.shape;
  char row[256];
  std::snprintf(row, sizeof row, "%u\t%u\t%u\t%u\t%.2f\t%.2f\t%.2f\t%.2f\n", s.experts, s.top_k, s.tokens,
                s.hidden, d.latency.p50(), d.bandwidth.p50(), m.latency.p50(), m.bandwidth.p50());
  out << "E\tE/tok\ttok\tdim\tDispatch_lat\tDispatch_bw\tCombine_lat\tCombine_bw\n" << row;
  std::printf("tsv: %s\n", c.tsv.c_str());
}

}  // namespace dissect::bench::moe_report
