// `dissect moe`: DeepEP's low-latency dispatch and combine (the MoE client, include/dissect/moe)
// on the softnic GPU engine, through mini-gda or mini-proxy with GPU producers (tuned handoff; a
// CPU worker per (rank, destination rank)). Two launch modes, the same rig and kernels
// (moe_rig.h): every rank in this process on one GPU, or one rank per process when the process
// was launched as one of several (DISSECT_RANK / DISSECT_WORLD_SIZE, or mpirun / srun: the
// bootstrap reads their variables), each process on GPU local_rank % devices. --provider mlx5
// (moe_provider.h, moe_rig_mlx5.cpp): one rank per process only, mini-gda, each process on a
// ConnectX of its own; the same kernels, the endpoints exchanged through the bootstrap.
//
// Per sample: reset the per-call counters, flush L2 (256 MB overwritten, as DeepEP's bench does),
// time the dispatch kernel with CUDA events (one process: the launch is the barrier, every rank
// starts together; one rank per process: a bootstrap barrier first), run the stand-in experts,
// flush again, time the combine. Every sample's in-kernel stamps (globaltimer) give the issue
// share. After each run every received token and every combined output is checked against the
// host reference; one rank per process: each rank checks its own and rank 0 gathers the samples
// and the checks (moe/group.h) and writes the one result. Bandwidth is DeepEP's
// (test_low_latency.py): unmasked selections x 7,408 B (dispatch) or x 14,336 B (combine) per
// rank, over the phase's time.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dissect/bench/experiment.h"
#include "dissect/bench/flag_help.h"
#include "dissect/bench/gpu_experiments.h"
#include "dissect/bench/progress.h"
#include "dissect/bootstrap/environment.h"
#include "dissect/bootstrap/mpi.h"
#include "dissect/common/error.h"
#include "dissect/moe/group.h"
#include "dissect/softnic/gpu_engine.h"
#include "gpu_command.h"
#include "harness.cuh"
#include "moe_provider.h"
#include "moe_report.h"
#include "moe_rig.h"

namespace dissect::bench {
namespace {

using gpu::GpuMoeRig;
using gpu::MoeSample;

namespace bs = dissect::bootstrap;
using moe_report::Config;
using moe_report::Launch;
using moe_report::PhaseSeries;

// Launched as one of several processes: by the environment bootstrap's variables (DISSECT_RANK,
// or Open MPI's / Slurm's), or by an MPI launcher in a build with MPI (bootstrap.h's order).
bool launched_as_processes() {
  return bs::launch_environment_present() || (bs::have_mpi() && bs::launched_by_mpi());
}

// The world size the launch variables give, or 0 where only MPI knows it (read at connect).
uint64_t launch_world_size() {
  return bs::launch_environment_present() ? static_cast<uint64_t>(bs::read_launch_environment().world_size) : 0;
}

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

void parse_shape(const Arguments& a, bool processes, moe::MoeShape& s) {
  s.hidden = static_cast<uint32_t>(a.integer("hidden", s.hidden, 128, 65536, "hidden size of a token, elements (DeepEP: 7,168)"));
  s.top_k = static_cast<uint32_t>(a.integer("top-k", s.top_k, 1, moe::MAX_TOP_K, "experts each token is routed to"));
  s.experts = static_cast<uint32_t>(a.integer("experts", s.experts, 1, 4096, "experts in all, spread evenly over the ranks"));
  const uint64_t world = processes ? launch_world_size() : 0;
  s.ranks = static_cast<uint32_t>(a.integer("ranks", world ? world : s.ranks, 1, 64,
                                            "ranks (EP size): in one process all on one GPU; launched as processes, "
                                            "one per process (default: the launch's world size)"));
  s.tokens = static_cast<uint32_t>(a.integer("tokens", s.tokens, 1, moe::MAX_TOKENS_PER_RANK,
                                             "tokens each rank dispatches (DeepEP's num_max_dispatch_tokens_per_rank)"));
  s.max_tokens = s.tokens;
  // Refused before any process connects or touches a GPU, where the variables give the world.
  const std::string error = world ? moe::world_error(s, static_cast<int>(world)) : moe::shape_error(s);
  if (!error.empty()) throw InvalidArgument(error);
}

Config parse(const Arguments& a, bool processes) {
  Config c;
  const std::string transport = a.choice("transport", "mini-gda", {"mini-gda", "mini-proxy"},
                                         "who posts: the GPU warps through mini-gda, or mini-proxy's CPU workers");
  c.rig.transport = transport == "mini-gda" ? gpu::MoeTransportKind::mini_gda : gpu::MoeTransportKind::mini_proxy;
  const bool quick = a.flag("quick", "2 runs of 20 samples (3 warm-up) instead of 3 of 50 (5)");
  moe::MoeShape& s = c.rig.shape;
  parse_shape(a, processes, s);
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
  c.rig.device = static_cast<int>(a.integer("device", 0, 0, 64, std::string(flag_help::DEVICE) +
                                            " (one process only: launched as processes, each takes local rank % devices)"));
  if (processes && a.given("device")) {
    throw InvalidArgument("--device " + std::to_string(c.rig.device) + ": launched as one rank per process, each "
                          "process takes GPU local_rank % devices; leave --device out (or restrict with CUDA_VISIBLE_DEVICES)");
  }
  c.rig.engine_ctas = static_cast<uint32_t>(a.integer("engine-ctas", c.rig.engine_ctas, 1, 1024, flag_help::ENGINE_CTAS));
  c.rig.engine_warps_per_cta = static_cast<uint32_t>(
      a.integer("engine-warps", c.rig.engine_warps_per_cta, 1, softnic::MAX_ENGINE_WARPS_PER_CTA,
                flag_help::ENGINE_WARPS));
  c.rig.nic_profile = a.text("nic-profile", "fast", flag_help::NIC_PROFILE);
  softnic::timing_profile(c.rig.nic_profile);  // refused here, by name, before anything runs
  moe_provider::parse(a, processes, c.rig);    // --provider and its knobs (moe_provider.h)
  c.runs = static_cast<uint32_t>(a.integer("runs", quick ? 2 : 3, 1, 100, flag_help::RUNS));
  c.iterations = static_cast<uint32_t>(a.integer("iterations", quick ? 20 : 50, 1, 100000,
                                                 "timed dispatch + combine samples per run"));
  c.warmup = static_cast<uint32_t>(a.integer("warmup", quick ? 3 : 5, 0, 100000, "untimed samples per run before the timed ones"));
  c.tsv = a.text("tsv", "", "also write pplx-kernels' benchmark row (p50 latency and bandwidth of both phases) to this TSV file");
  a.check_all_used();
  return c;
}

moe::LaunchFingerprint fingerprint(const Config& c) {
  moe::LaunchFingerprint f;
  const moe::MoeShape& s = c.rig.shape;
  f.hidden = s.hidden, f.top_k = s.top_k, f.experts = s.experts, f.ranks = s.ranks, f.tokens = s.tokens;
  f.transport = static_cast<uint32_t>(c.rig.transport);
  f.provider = c.rig.provider == "mlx5" ? 1 : 0;
  f.doorbell_batch = c.rig.doorbell_batch, f.warps_per_rank = c.rig.warps_per_rank;
  f.seed = c.rig.routing.seed, f.masked_fraction = c.rig.routing.masked_fraction;
  f.runs = c.runs, f.samples_per_run = c.warmup + c.iterations;
  return f;
}

// One rank per process: connects the group (bounded by DISSECT_BOOTSTRAP_TIMEOUT), checks the
// world against the shape and every rank's arguments against this one's, and picks the GPU.
std::unique_ptr<bs::Bootstrap> join_launch(Config& c, int devices) {
  auto group = bs::create_bootstrap();
  const std::string error = moe::world_error(c.rig.shape, group->world_size());
  if (!error.empty()) throw InvalidArgument(error);
  moe::check_fingerprints(bs::allgather_value(*group, fingerprint(c)), group->rank());
  c.rig.device = group->local_rank() % devices;
  moe_provider::choose_nic(c.rig, group->local_rank(), devices);
  c.rig.group = group.get();
  return group;
}

// Who numbered the ranks: the launch variables the environment bootstrap read, or MPI.
std::string rank_source(const bs::Bootstrap* group) {
  if (group == nullptr) return "";
  if (group->kind() != "environment") return "MPI_COMM_WORLD";
  return bs::to_string(bs::read_launch_environment().source);
}

uint32_t distinct(const std::vector<std::string>& gpus) {
  std::vector<std::string> sorted = gpus;
  std::sort(sorted.begin(), sorted.end());
  return static_cast<uint32_t>(std::unique(sorted.begin(), sorted.end()) - sorted.begin());
}

// The environment block of the GPU experiments (to_report.cpp): the effective SM clock and the
// globaltimer's step (the stamps' resolution), the device; main adds the machine (note_machine).
std::vector<std::pair<std::string, std::string>> environment(GpuMoeRig& rig, const Config& c) {
  char clock[32], step[32];
  std::snprintf(clock, sizeof clock, "%.0f", rig.measure_sm_clock_mhz());
  std::snprintf(step, sizeof step, "%.0f", gpu::measure_globaltimer_step(c.rig.device));
  std::vector<std::pair<std::string, std::string>> out = {
      {"sm_clock_mhz", clock}, {"globaltimer_step_ns", step},
      {"sm clock", "rank 0's, clock64 against globaltimer over 2 ms of one thread after the last run"},
      {"timing", "CUDA events per phase; in-kernel stamps from globaltimer"}};
  if (const std::string name = gpu_device_name(c.rig.device); !name.empty()) out.emplace_back("gpu", name);
  std::string gpus;
  for (const std::string& pci : rig.gpus()) gpus += (gpus.empty() ? "" : ",") + pci;
  out.emplace_back("rank gpus (PCI)", gpus);
  return out;
}

// One run of this process's ranks: records[i][sample] for rank first_rank() + i, and its checks.
std::vector<std::vector<moe::RankRecord>> run_samples(GpuMoeRig& rig, const Config& c,
                                                      moe::CheckSummary& checks) {
  std::vector<std::vector<moe::RankRecord>> mine(rig.local_ranks());
  for (uint32_t i = 0; i < c.warmup + c.iterations; ++i) {
    const MoeSample sample = rig.run_once();
    if (i < c.warmup) continue;
    for (uint32_t r = 0; r < rig.local_ranks(); ++r) {
      mine[r].push_back({sample.dispatch_us, sample.combine_us, sample.dispatch[r], sample.combine[r]});
    }
  }
  moe::CheckReport dc, cc;
  rig.validate(dc, cc);
  checks = moe::summarize_checks(dc, cc);
  return mine;
}

std::string describe_failures(uint32_t run, const std::vector<moe::CheckSummary>& checks) {
  std::string note;
  for (size_t r = 0; r < checks.size(); ++r) {
    const moe::CheckSummary& k = checks[r];
    if (moe::passed(k)) continue;
    note += "run " + std::to_string(run) + (checks.size() > 1 ? ", rank " + std::to_string(r) : "") + ": " +
            std::to_string(k.dispatch_mismatches) + " dispatch mismatches of " + std::to_string(k.dispatch_checked) +
            ", " + std::to_string(k.combine_mismatches) + " combine of " + std::to_string(k.combine_checked) +
            (k.first[0] ? std::string("; ") + k.first : std::string()) + "; ";
  }
  return note;
}

int run_moe(const Arguments& a, Report& report) {
  const bool processes = launched_as_processes();
  Config c = parse(a, processes);
  moe_provider::check_host(c.rig);  // mlx5: rdma-core built in and the device there, before any wait
  const int devices = softnic::gpu_runtime_init();
  if (skip_without_cuda_device()) return 0;
  std::unique_ptr<bs::Bootstrap> group = processes ? join_launch(c, devices) : nullptr;
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
    moe::CheckSummary mine_checks;
    std::vector<std::vector<moe::RankRecord>> records = run_samples(rig, c, mine_checks);
    std::vector<moe::CheckSummary> checks{mine_checks};
    if (group) {
      records = moe::gather_records(*group, records.at(0));
      checks = moe::gather_checks(*group, mine_checks);
    }
    for (const moe::CheckSummary& k : checks) valid = valid && moe::passed(k);
    note += describe_failures(run, checks);
    moe_report::add_run(c, records, mean_selections, dispatch, combine);
    uint64_t tokens = 0, outputs = 0;
    for (const moe::CheckSummary& k : checks) tokens += k.dispatch_checked, outputs += k.combine_checked;
    progress.done("run " + std::to_string(run) + ": " + std::to_string(tokens) + " tokens, " +
                  std::to_string(outputs) + " outputs checked");
  }
  const auto env = environment(rig, c);
  Launch launch{processes, group ? group->kind() : "", rank_source(group.get()),
                group ? static_cast<uint32_t>(group->world_size()) : 1u, distinct(rig.gpus()), rig.nics()};
  rig.shut_down();
  if (group && group->rank() != 0) {
    report.set_served("moe: rank " + std::to_string(group->rank()) + " of " + std::to_string(group->world_size()) +
                      " (GPU " + std::to_string(c.rig.device) +
                      (c.rig.provider == "mlx5" ? ", " + c.rig.mlx5.nic : std::string()) + ") measured and sent its samples and checks to rank 0: " +
                      (valid ? "every rank validated" : "NOT VALIDATED: " + note));
    return valid ? 0 : 1;
  }
  moe_report::print_deepep(c, launch, selections, dispatch, combine);
  if (!c.tsv.empty()) moe_report::write_tsv(c, dispatch, combine);
  report.add(moe_report::phase_result(c, launch, "dispatch", dispatch, valid, rig.qps(), mean_selections, note, env));
  report.add(moe_report::phase_result(c, launch, "combine", combine, valid, rig.qps(), mean_selections, note, env));
  return valid ? 0 : 1;
}

const bool registered = register_experiment(
    {"moe",
     "DeepEP low-latency MoE dispatch and combine (FP8 dispatch, BF16 combine): R ranks on one GPU in one "
     "process, or one rank per process (DISSECT_RANK/DISSECT_WORLD_SIZE or mpirun), --transport "
     "mini-gda|mini-proxy; --provider mlx5: one rank per process on a ConnectX each (mini-gda); DeepEP's "
     "per-rank print and pplx-kernels' TSV (--tsv)",
     run_moe, false});

}  // namespace
}  // namespace dissect::bench
