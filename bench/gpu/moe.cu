// `dissect moe`: DeepEP's low-latency dispatch and combine (the MoE client, include/dissect/moe)
// with R ranks on one GPU, in one process, on the softnic GPU engine, through mini-gda or mini-proxy
// with GPU producers (tuned handoff; a CPU worker per (rank, destination rank)).
//
// Per sample: reset the per-call counters, flush L2 (256 MB overwritten, as DeepEP's bench does),
// time the dispatch kernel of every rank with CUDA events (the launch is the barrier: every rank
// starts together), run the stand-in experts, flush again, time the combine. Every sample's
// in-kernel stamps (globaltimer) give the issue-time share. After each run every received token
// and every combined output of every rank is checked against the host reference. Bandwidth is
// DeepEP's (test_low_latency.py): unmasked selections x 7,408 B (dispatch) or x 14,336 B (combine)
// per rank, over the phase's time.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "dissect/bench/experiment.h"
#include "dissect/bench/flag_help.h"
#include "dissect/bench/progress.h"
#include "dissect/common/error.h"
#include "dissect/softnic/gpu_engine.h"
#include "gpu_command.h"
#include "moe_rig.h"

namespace dissect::bench {
namespace {

using gpu::GpuMoeOptions;
using gpu::GpuMoeRig;
using gpu::MoeSample;

// What the results stand beside: DeepEP's README (low-latency kernels, EP8, H800 with CX-7
// InfiniBand 400 Gb/s, 128 tokens, hidden 7,168, top-8, FP8 dispatch, BF16 combine) and the paper.
constexpr double DEEPEP_EP8_DISPATCH_US = 77, DEEPEP_EP8_COMBINE_US = 114;
constexpr double PAPER_ISSUE_US = 25, PAPER_DISPATCH_MS = 0.49;

struct MoeRunConfig {
  GpuMoeOptions rig;
  uint32_t runs = 3, iterations = 50, warmup = 5;
  std::string tsv;
};

double parse_fraction(const Arguments& a) {
  const std::string text = a.text("masked-fraction", "0",
                                  "probability that a top-k selection is masked (-1), 0..1 (DeepEP's random masks)");
  size_t used = 0;
  double v = -1;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
  }
  if (used != text.size() || !(v >= 0 && v <= 1)) {
    throw InvalidArgument("--masked-fraction '" + text + "': a number in 0..1");
  }
  return v;
}

MoeRunConfig parse(const Arguments& a) {
  a.provider({"softnic"});
  MoeRunConfig c;
  const std::string transport = a.choice("transport", "mini-gda", {"mini-gda", "mini-proxy"},
                                          "who posts: the GPU warps through mini-gda, or mini-proxy's CPU workers");
  c.rig.transport = transport == "mini-gda" ? gpu::MoeTransportKind::mini_gda : gpu::MoeTransportKind::mini_proxy;
  const bool quick = a.flag("quick", "2 runs of 20 samples (3 warm-up) instead of 3 of 50 (5)");
  moe::MoeShape& s = c.rig.shape;
  s.hidden = static_cast<uint32_t>(a.integer("hidden", s.hidden, 128, 65536, "hidden size of a token, elements (DeepEP: 7,168)"));
  s.top_k = static_cast<uint32_t>(a.integer("top-k", s.top_k, 1, moe::MAX_TOP_K, "experts each token is routed to"));
  s.experts = static_cast<uint32_t>(a.integer("experts", s.experts, 1, 4096, "experts in all, spread evenly over the ranks"));
  s.ranks = static_cast<uint32_t>(a.integer("ranks", s.ranks, 1, 64, "ranks (EP size), all on one GPU in this process"));
  s.tokens = static_cast<uint32_t>(a.integer("tokens", s.tokens, 1, moe::MAX_TOKENS_PER_RANK,
                                                   "tokens each rank dispatches (DeepEP's num_max_dispatch_tokens_per_rank)"));
  s.max_tokens = s.tokens;
  const std::string error = moe::shape_error(s);
  if (!error.empty()) throw InvalidArgument(error);
  c.rig.routing.seed = a.integer("seed", 1, 0, ~uint64_t{0} >> 1, "seed of the tokens and the routing");
  c.rig.routing.masked_fraction = parse_fraction(a);
  c.rig.doorbell_batch = static_cast<uint32_t>(a.integer("doorbell-batch", 4, 1, 128,
                                                                  "requests per doorbell (DeepEP's kNumRequestInBatch; mini-proxy: the worker's chain)"));
  const uint32_t one_per_token = (s.tokens + 7) / 8 * 8;
  c.rig.warps_per_rank = static_cast<uint32_t>(a.integer("warps-per-rank", one_per_token, 8, 1024,
                                                                  "warps of a phase kernel per rank, a multiple of 8 (default: one per token)"));
  if (c.rig.warps_per_rank % 8 != 0) {
    throw InvalidArgument("--warps-per-rank " + std::to_string(c.rig.warps_per_rank) + ": a multiple of 8 (CTAs of 8 warps)");
  }
  c.rig.device = static_cast<int>(a.integer("device", 0, 0, 64, flag_help::DEVICE));
  c.rig.engine_ctas = static_cast<uint32_t>(a.integer("engine-ctas", c.rig.engine_ctas, 1, 1024, flag_help::ENGINE_CTAS));
  c.rig.engine_warps_per_cta = static_cast<uint32_t>(
      a.integer("engine-warps", c.rig.engine_warps_per_cta, 1, softnic::MAX_ENGINE_WARPS_PER_CTA,
                flag_help::ENGINE_WARPS));
  c.rig.nic_profile = a.text("nic-profile", "fast", flag_help::NIC_PROFILE);
  softnic::timing_profile(c.rig.nic_profile);  // refused here, by name, before anything runs
  c.runs = static_cast<uint32_t>(a.integer("runs", quick ? 2 : 3, 1, 100, flag_help::RUNS));
  c.iterations = static_cast<uint32_t>(a.integer("iterations", quick ? 20 : 50, 1, 100000,
                                                 "timed dispatch + combine samples per run"));
  c.warmup = static_cast<uint32_t>(a.integer("warmup", quick ? 3 : 5, 0, 100000, "untimed samples per run before the timed ones"));
  c.tsv = a.text("tsv", "", "also write pplx-kernels' benchmark row (p50 latency and bandwidth of both phases) to this TSV file");
  a.check_all_used();
  return c;
}

// The issue share of one phase in one sample: the mean over ranks of (issue time of the mean
// warp) / (the rank's span from its first warp's start to its last warp's end).
double issue_share(const std::vector<moe::PhaseStamps>& ranks, double* issue_us) {
  double share = 0, issue = 0;
  for (const moe::PhaseStamps& p : ranks) {
    const double span = double(p.end_ns - moe::stamp_begin(p));
    const double mean_warp = p.warps ? double(p.issue_ns) / double(p.warps) : 0;
    share += span > 0 ? mean_warp / span : 0;
    issue += mean_warp / 1e3;
  }
  *issue_us = issue / ranks.size();
  return share / ranks.size();
}

struct PhaseSeries {
  Metric latency{"latency", "us", {}}, bandwidth{"bandwidth", "GB/s", {}};
  Metric share{"issue share", "%", {}}, issue{"issue time (mean warp)", "us", {}};
  std::vector<double> all_latency;  // every sample of every run (DeepEP's avg_t)
};

void add_run(PhaseSeries& p, const std::vector<double>& latency, const std::vector<double>& share,
             const std::vector<double>& issue, double bytes_per_rank) {
  std::vector<double> bandwidth;
  for (double us : latency) bandwidth.push_back(bytes_per_rank / 1e9 / (us * 1e-6));
  p.latency.runs.push_back(summarize(latency));
  p.bandwidth.runs.push_back(summarize(bandwidth));
  p.share.runs.push_back(summarize(share));
  p.issue.runs.push_back(summarize(issue));
  p.all_latency.insert(p.all_latency.end(), latency.begin(), latency.end());
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / v.size();
}

Result phase_result(const MoeRunConfig& c, const char* phase, const PhaseSeries& p, bool valid,
                    uint32_t qps, const std::string& note) {
  const moe::MoeShape& s = c.rig.shape;
  Result r;
  r.experiment = "moe";
  r.label = std::string(phase) + ", " + std::to_string(s.ranks) + " ranks, " + std::to_string(s.tokens) + " tokens";
  r.engine = "gpu-kernel";
  r.placement = "gpu";
  r.submitter = c.rig.transport == gpu::MoeTransportKind::mini_gda ? "gpu-warp" : "proxy-worker";
  r.pe_layout = std::to_string(s.ranks) + " PEs, 1 process, 1 GPU";
  r.knobs = {{"phase", phase}, {"transport", gpu::to_string(c.rig.transport)},
             {"ordering", c.rig.transport == gpu::MoeTransportKind::mini_gda ? "gpu-release-store"
                                                                          : "tuned handoff, shared rings"},
             {"hidden", std::to_string(s.hidden)}, {"top_k", std::to_string(s.top_k)},
             {"experts", std::to_string(s.experts)}, {"tokens", std::to_string(s.tokens)},
             {"ranks", std::to_string(s.ranks)}, {"seed", std::to_string(c.rig.routing.seed)},
             {"masked_fraction", std::to_string(c.rig.routing.masked_fraction)},
             {"doorbell_batch", std::to_string(c.rig.doorbell_batch)},
             {"warps_per_rank", std::to_string(c.rig.warps_per_rank)}, {"qps", std::to_string(qps)},
             {"iterations", std::to_string(c.iterations)}, {"warmup", std::to_string(c.warmup)},
             {"message_bytes", std::to_string(std::string(phase) == "dispatch" ? moe::dispatch_message_bytes(s)
                                                                            : moe::combine_message_bytes(s))},
             {"engine_warps", std::to_string(c.rig.engine_ctas) + " CTAs x " + std::to_string(c.rig.engine_warps_per_cta) + " warps"},
             {"nic_profile", softnic::profile_name(softnic::timing_profile(c.rig.nic_profile))},
             {"timing", "CUDA events around one kernel of every rank, L2 flushed (256 MB) before it; "
                        "issue share from globaltimer stamps"}};
  if (c.rig.transport == gpu::MoeTransportKind::mini_proxy) {
    r.knobs.push_back({"proxy_workers", std::to_string(s.ranks * s.ranks) +
                                            " CPU threads (a worker per rank and destination), unpinned, tuned handoff"});
  }
  r.knobs.push_back({"beside", "DeepEP EP8 (H800 + CX-7 400 Gb/s): dispatch 77 us, combine 114 us; "
                               "paper: issue 25 us of a 0.49 ms dispatch"});
  if (!note.empty()) r.knobs.push_back({"note", note});
  r.metrics = {p.latency, p.bandwidth, p.share, p.issue};
  r.payload_validated = valid;
  return r;
}

// DeepEP's per-rank line (test_low_latency.py), with avg_t the mean of every sample of every run.
void print_deepep(const MoeRunConfig& c, const std::vector<uint64_t>& selections,
                  const PhaseSeries& d, const PhaseSeries& m) {
  const moe::MoeShape& s = c.rig.shape;
  const double dt = mean(d.all_latency), ct = mean(m.all_latency);
  std::printf("moe: DeepEP low-latency, %u ranks on one GPU (softnic: a model, not a ConnectX), "
              "transport %s\n", s.ranks, gpu::to_string(c.rig.transport));
  for (uint32_t r = 0; r < s.ranks; ++r) {
    const double db = double(selections[r]) * moe::dispatch_message_bytes(s) / 1e9 / (dt * 1e-6);
    const double cb = double(selections[r]) * moe::combine_message_bytes(s) / 1e9 / (ct * 1e-6);
    std::printf("[rank %u] Dispatch bandwidth: %.2f GB/s, avg_t=%.2f us | Combine bandwidth: %.2f GB/s, "
                "avg_t=%.2f us\n", r, db, dt, cb, ct);
  }
  std::printf("issue share (p50 over runs): dispatch %.1f%% (mean warp %.2f us), combine %.1f%% (mean warp "
              "%.2f us)\n", d.share.p50(), d.issue.p50(), m.share.p50(), m.issue.p50());
  std::printf("beside: DeepEP's published EP8 (H800 + CX-7 400 Gb/s, 8 GPUs): dispatch %.0f us, combine "
              "%.0f us; the paper: issue %.0f us of a %.2f ms dispatch (%.1f%%)\n", DEEPEP_EP8_DISPATCH_US,
              DEEPEP_EP8_COMBINE_US, PAPER_ISSUE_US, PAPER_DISPATCH_MS, 100 * PAPER_ISSUE_US / (PAPER_DISPATCH_MS * 1e3));
}

// pplx-kernels' benchmark columns, one row: latency p50 in us, bandwidth p50 in GB/s.
void write_tsv(const MoeRunConfig& c, const PhaseSeries& d, const PhaseSeries& m) {
  std::ofstream out(c.tsv);
  if (!out) throw InvalidArgument("--tsv '" + c.tsv + "' cannot be written");
  const moe::MoeShape& s = c.rig.shape;
  char row[256];
  std::snprintf(row, sizeof row, "%u\t%u\t%u\t%u\t%.2f\t%.2f\t%.2f\t%.2f\n", s.experts, s.top_k, s.tokens,
                s.hidden, d.latency.p50(), d.bandwidth.p50(), m.latency.p50(), m.bandwidth.p50());
  out << "E\tE/tok\ttok\tdim\tDispatch_lat\tDispatch_bw\tCombine_lat\tCombine_bw\n" << row;
  std::printf("tsv: %s\n", c.tsv.c_str());
}

int run_moe(const Arguments& a, Report& report) {
  const MoeRunConfig c = parse(a);
  if (skip_without_cuda_device()) return 0;
  const moe::MoeShape& s = c.rig.shape;
  GpuMoeRig rig(c.rig);
  std::vector<uint64_t> selections;
  double mean_selections = 0;
  for (const moe::RankInputs& in : rig.inputs()) {
    selections.push_back(moe::selections(s, in));
    mean_selections += double(selections.back()) / s.ranks;
  }
  PhaseSeries dispatch, combine;
  bool valid = true;
  std::string note;
  Progress progress("moe", c.runs);
  for (uint32_t run = 0; run < c.runs; ++run) {
    std::vector<double> dl, cl, ds, cs, di, ci;
    for (uint32_t i = 0; i < c.warmup + c.iterations; ++i) {
      const MoeSample sample = rig.run_once();
      if (i < c.warmup) continue;
      double issue_us = 0;
      dl.push_back(sample.dispatch_us);
      cl.push_back(sample.combine_us);
      ds.push_back(100 * issue_share(sample.dispatch, &issue_us));
      di.push_back(issue_us);
      cs.push_back(100 * issue_share(sample.combine, &issue_us));
      ci.push_back(issue_us);
    }
    moe::CheckReport dc, cc;
    rig.validate(dc, cc);
    if (!dc.ok() || !cc.ok()) {
      valid = false;
      note += "run " + std::to_string(run) + ": " + std::to_string(dc.mismatches) + " dispatch and " +
              std::to_string(cc.mismatches) + " combine mismatches" +
              (dc.first.empty() ? "" : "; " + dc.first[0]) + (cc.first.empty() ? "" : "; " + cc.first[0]) + "; ";
    }
    add_run(dispatch, dl, ds, di, mean_selections * moe::dispatch_message_bytes(s));
    add_run(combine, cl, cs, ci, mean_selections * moe::combine_message_bytes(s));
    progress.done("run " + std::to_string(run) + ": " + std::to_string(dc.checked) + " tokens, " +
                  std::to_string(cc.checked) + " outputs checked");
  }
  print_deepep(c, selections, dispatch, combine);
  if (!c.tsv.empty()) write_tsv(c, dispatch, combine);
  report.add(phase_result(c, "dispatch", dispatch, valid, rig.qps(), note));
  report.add(phase_result(c, "combine", combine, valid, rig.qps(), note));
  return valid ? 0 : 1;
}

const bool registered = register_experiment(
    {"moe",
     "DeepEP low-latency MoE dispatch and combine (FP8 dispatch, BF16 combine) of R ranks on one GPU, "
     "--transport mini-gda|mini-proxy; DeepEP's per-rank print and pplx-kernels' TSV (--tsv)",
     run_moe, false});

}  // namespace
}  // namespace dissect::bench
