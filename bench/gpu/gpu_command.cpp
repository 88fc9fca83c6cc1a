#include "gpu_command.h"

#include <cstdio>
#include <string>

#include "dissect/common/error.h"

#include "dissect/bench/flag_help.h"
#include "dissect/bench/progress.h"
#include "dissect/softnic/gpu_engine.h"
#include "peer_latency.h"
#include "to_report.h"

namespace dissect::bench {
namespace {

// --raw where an experiment times each operation: the harness keeps every run's samples. One
// that times only whole runs (gpu-telemetry-rate: one rate per run) has none, says so in --help
// and refuses the flag by name rather than accept it and write nothing.
void read_raw(const Arguments& a, bool per_sample) {
  const std::string about =
      per_sample ? "keep every sample: each run's times in measured order go into the JSON (`raw`)"
                 : "refused: " + a.subcommand() + " times whole runs (one rate per run), it has no per-sample times";
  const bool raw = a.flag("raw", about);
  if (raw && !per_sample) {
    throw InvalidArgument("--raw: " + a.subcommand() +
                          " times whole runs (one rate per run), it has no per-sample times to keep");
  }
  set_keep_gpu_samples(raw);
}

// The PE pair's softnic: what executes the WQEs, where the queues live, on how many GPUs.
void read_pe_pair_flags(const Arguments& a, PePairConfig& c) {
  c.engine = a.choice("engine", "gpu-kernel", {"gpu-kernel", "host-thread"},
                      "what executes the WQEs: the softnic's persistent GPU kernel or a host thread");
  c.placement = a.choice("placement", c.engine == "host-thread" ? "host" : "gpu", {"gpu", "host"},
                         "where the queues and buffers live: GPU memory or mapped host memory "
                         "(default: gpu, host with --engine host-thread)");
  c.pe_layout = a.choice("layout", "one-gpu", {"one-gpu", "two-gpus"},
                         "both PEs on one GPU and one engine, or PE i on GPU i (peer access)");
  c.engine_ctas = static_cast<uint32_t>(a.integer("engine-ctas", c.engine_ctas, 1, 1024, flag_help::ENGINE_CTAS));
  c.engine_warps_per_cta = static_cast<uint32_t>(a.integer(
      "engine-warps", c.engine_warps_per_cta, 1, softnic::MAX_ENGINE_WARPS_PER_CTA, flag_help::ENGINE_WARPS));
  c.nic_profile = a.text("nic-profile", "fast", flag_help::NIC_PROFILE);
  softnic::timing_profile(c.nic_profile);  // refused here, by name, before anything runs
  // The engine kernel's size means nothing to a host-thread engine: refused rather than ignored.
  for (const char* name : {"engine-ctas", "engine-warps"}) {
    if (c.engine == "host-thread" && a.given(name)) {
      throw InvalidArgument(std::string("--") + name + " sizes the softnic's GPU engine kernel; --engine " +
                            c.engine + " has none");
    }
  }
}

// The flags every GPU subcommand takes: device, runs, iterations, warm-up.
void read_run_flags(const Arguments& a, const GpuCommand& command, PePairConfig& c) {
  const bool quick = a.flag("quick", "--iterations 300 instead of 1,000");
  c.device = static_cast<int>(a.integer("device", 0, 0, 64, flag_help::DEVICE));
  c.runs = static_cast<uint32_t>(a.integer("runs", 3, 1, 100, flag_help::RUNS));  // each on a fresh rig
  // gpu-telemetry-rate streams messages in batches: its iterations and warm-up count in 256 and 16.
  c.iterations = static_cast<uint32_t>(a.integer(
      "iterations", quick ? 300 : 1000, 10, 10'000'000,
      command.per_sample ? "timed operations per run, one GPU thread, one outstanding"
                         : "timed messages per run, in units of 256 (16 writes per doorbell)"));
  c.warmup = static_cast<uint32_t>(a.integer(
      "warmup", 200, 100, 10'000'000,
      command.per_sample ? "operations per run before the timed ones, discarded"
                         : "untimed messages per run before the timed ones, in units of 16"));
}

// --transport and --av (gpu-latency, mini-gda's own puts only): --av without DC, or DC through a
// peer library's code (RC only), is refused rather than ignored.
void read_transport_flags(const Arguments& a, PePairConfig& c) {
  c.transport = a.choice("transport", "rc", {"rc", "dc"},
                         "rc: the RC QP's puts; dc: also the same puts from a DCI to a DCT of the peer, "
                         "in the same result (put+completion; docs/dc.md)");
  c.dc_av = a.choice("av", "compact", {"full", "compact"},
                     "--transport dc: the DC address vector, full (48 B) or compact (16 B)");
  if (c.transport != "dc" && a.given("av")) {
    throw InvalidArgument("--av " + c.dc_av + " sizes the DC address vector; --transport " + c.transport +
                          " has none (give --transport dc)");
  }
  if (c.transport == "dc" && c.path != "mini-gda") {
    throw InvalidArgument("--transport dc: --path " + c.path + " posts through its own RC QP code; "
                          "DC puts are mini-gda's (--path mini-gda)");
  }
}

// parse: every flag of the command into its configuration, refused by name before anything runs.
PePairConfig parse_gpu_command(const Arguments& a, const GpuCommand& command) {
  a.provider({"softnic"});
  read_raw(a, command.per_sample);
  PePairConfig c;
  read_run_flags(a, command, c);
  if (command.on_pe_pair) read_pe_pair_flags(a, c);
  if (command.takes_path) {
    c.path = a.choice("path", "mini-gda", latency_paths(),
                      "whose device code posts and waits: mini-gda, or a peer library's own (src/peers)");
  }
  if (command.fixed_path) c.path = command.fixed_path;
  if (command.takes_transport) read_transport_flags(a, c);
  a.check_all_used();
  check_latency_path(c);  // an adapter not built, or a configuration it cannot run: by name
  return c;
}

}  // namespace

bool skip_without_cuda_device() {
  if (softnic::gpu_runtime_init() != 0) return false;
  std::fprintf(stderr, "no CUDA device: skipped\n");
  return true;
}

int run_gpu_experiment(const Arguments& a, Report& report, const GpuCommand& command) {
  PePairConfig c = parse_gpu_command(a, command);
  const int devices = softnic::gpu_runtime_init();
  if (devices == 0) {
    std::fprintf(stderr, "no CUDA device: skipped\n");
    return 0;
  }
  if (c.pe_layout == "two-gpus" && devices < c.device + 2) {
    std::fprintf(stderr, "two-gpus layout needs 2 CUDA devices: skipped\n");
    return 0;
  }
  Progress progress(a.subcommand(), 0);
  bind_progress(progress, c);
  return add_results(report, command.runner(c));
}

}  // namespace dissect::bench
