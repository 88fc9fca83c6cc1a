// `dissect gpu-kernel-cost`: §4.3.2, Figure 9 and Table 14, on the GPU. A compute (FMA) caller
// and a memory-streaming caller keep N live values per thread across the communication call site,
// in blocks of 256 threads, four per SM (the paper's 528 on 132 SMs; see BLOCKS_PER_CALLER_SM);
// each block sends 0, 1, 4 or 16 messages of 8 B or 7 KiB, through mini-gda (one QP per block)
// or mini-proxy (4 workers, 32 rings): kernel_cost_rig.h. Variants, the paper's names:
//   no communication code      the baseline kernel: the call site is not compiled in
//   code only                  compiled in, its branch never taken (0 messages)
//   send, then compute         thread 0 submits each message and its warp computes on
//   send, wait, then compute   thread 0 waits for each message's completion first
// each in two builds: the send inlined into the caller, and separately compiled (-rdc, a real
// call: kernel_cost/). The throughput loss is against the no-communication kernel launched just
// before it (paired launches, `--runs` pairs); times exclude the final completion drain (a second
// kernel). Beside each loss: the kernel's registers per thread and local memory per thread (stack
// and spills together: cudaFuncGetAttributes cannot tell them apart; ptxas -v can) and resident
// blocks per SM (cudaOccupancyMaxActiveBlocksPerMultiprocessor), which explain a loss.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "dissect/bench/experiment.h"
#include "dissect/bench/flag_help.h"
#include "dissect/bench/progress.h"
#include "dissect/common/cuda.h"
#include "dissect/common/error.h"
#include "dissect/softnic/gpu_engine.h"
#include "gpu_command.h"
#include "kernel_cost_kernel.cuh"
#include "kernel_cost_rig.h"

namespace dissect::bench::gpu {
namespace {

// One QP per block on one softnic: the rig runs the paper's 528 here and no more (gpu-rate's
// limit on the same rig).
constexpr uint32_t MAX_BLOCKS = 528;
// The paper's 528 blocks are four per SM of a 132-SM GPU. Here the GPU engine's CTAs hold whole
// SMs (each fills an SM's registers: softnic/gpu_engine.h), so by default the launch keeps four
// blocks per SM left to the callers; otherwise a kernel at exactly four resident blocks per SM
// would pay a second wave that the paper's did not. --blocks 528 launches the paper's count.
constexpr uint32_t BLOCKS_PER_CALLER_SM = 4;
constexpr uint32_t STREAM_ROWS = 512;  // 512 rows x 135,168 threads x 4 B = 277 MB, > L2

struct Config {
  std::vector<std::string> paths, callers, builds, variants;
  std::vector<uint64_t> live, messages, sizes;
  uint32_t blocks = 0, compute_steps = 8192, stream_steps = 2048, runs = 5;
  LoopbackOptions rig;  // mini-gda's engine; its device is mini-proxy's too
};

enum class Variant { none, code_only, send, send_wait };

const char* variant_name(Variant v) {
  switch (v) {
    case Variant::none: return "no communication code";
    case Variant::code_only: return "code only";
    case Variant::send: return "send, then compute";
    case Variant::send_wait: return "send, wait, then compute";
  }
  return "?";
}

// One kernel to measure: its path and build, and what it sends.
struct Case {
  Path path;
  Caller caller;
  uint32_t live;
  Build build;
  Variant variant;
  uint32_t messages = 0, bytes = 8;
  const void* kernel = nullptr;
};

template <Caller C, uint32_t L>
const void* inline_kernel(Build b, Path p) {
  if (b == Build::none) return reinterpret_cast<const void*>(&kernel_cost<C, L, Build::none>);
  return p == Path::mini_gda
             ? reinterpret_cast<const void*>(&kernel_cost<C, L, Build::inlined, Path::mini_gda>)
             : reinterpret_cast<const void*>(&kernel_cost<C, L, Build::inlined, Path::mini_proxy>);
}

const void* kernel_for(const Case& k) {
  if (k.build == Build::separate) return separate_kernel_cost(k.caller, k.live, k.path);
  const bool compute = k.caller == Caller::compute;
  if (k.live == 8) {
    return compute ? inline_kernel<Caller::compute, 8>(k.build, k.path)
                   : inline_kernel<Caller::stream, 8>(k.build, k.path);
  }
  return compute ? inline_kernel<Caller::compute, 16>(k.build, k.path)
                 : inline_kernel<Caller::stream, 16>(k.build, k.path);
}

struct Resources {
  cudaFuncAttributes attributes{};
  int blocks_per_sm = 0;
};

Resources resources_of(const void* kernel) {
  Resources r;
  check_cuda(cudaFuncGetAttributes(&r.attributes, kernel), "gpu-kernel-cost: cudaFuncGetAttributes");
  check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r.blocks_per_sm, kernel,
                                                           KERNEL_COST_THREADS, 0),
             "gpu-kernel-cost: cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  return r;
}

// The kernel arguments every launch starts from: the run's buffers, the path's handles.
KernelCostArgs allocate(KernelCostRig& rig, uint32_t blocks) {
  KernelCostArgs a{};
  const size_t threads = size_t{blocks} * KERNEL_COST_THREADS;
  rig.bind(a);
  a.stream_rows = STREAM_ROWS;
  a.stream = static_cast<const float*>(rig.allocate(sizeof(float) * threads * STREAM_ROWS));
  a.out = static_cast<float*>(rig.allocate(sizeof(float) * threads));
  a.block_start = static_cast<unsigned long long*>(rig.allocate(8 * blocks));
  a.block_end = static_cast<unsigned long long*>(rig.allocate(8 * blocks));
  a.clock = static_cast<unsigned long long*>(rig.allocate(16));
  a.failure = static_cast<uint32_t*>(rig.allocate(8));
  return a;
}

// What a measurement shares: the path's rig, the arguments, the launch shape.
struct Bench {
  KernelCostRig& rig;
  const KernelCostArgs& args;
  const Config& config;
  int caller_sms;
};

// One launch and its drain: the kernel's span (first block start to last block end, ns) and its
// effective SM clock (block 0's clock64 against %globaltimer).
struct Launch {
  double ns = 0, mhz = 0;
};

uint32_t steps_of(const Config& c, Caller caller) {
  return caller == Caller::compute ? c.compute_steps : c.stream_steps;
}

Launch launch(const Bench& b, const Case& k) {
  const uint32_t blocks = b.config.blocks;
  KernelCostArgs args = b.args;
  args.steps = steps_of(b.config, k.caller);
  args.messages = k.messages;
  args.bytes = k.bytes;
  args.wait = k.variant == Variant::send_wait;
  void* params[] = {&args};
  check_cuda(cudaLaunchKernel(k.kernel, blocks, KERNEL_COST_THREADS, params, 0, b.rig.stream()),
             "gpu-kernel-cost: launch the caller kernel");
  b.rig.drain(args, blocks);
  b.rig.wait("gpu-kernel-cost: caller kernel and drain");
  std::vector<unsigned long long> start(blocks), end(blocks), clock(2);
  b.rig.read(start.data(), args.block_start, blocks);
  b.rig.read(end.data(), args.block_end, blocks);
  b.rig.read(clock.data(), args.clock, 2);
  const auto first = *std::min_element(start.begin(), start.end());
  const auto last = *std::max_element(end.begin(), end.end());
  return Launch{double(last - first), clock[1] ? double(clock[0]) * 1e3 / double(clock[1]) : 0};
}

Summary one_value(double v) {
  Summary s;
  s.p10 = s.p50 = s.p90 = s.p99 = v;
  s.samples = 1;
  return s;
}

const char* path_name(Path p) { return p == Path::mini_gda ? "mini-gda" : "mini-proxy"; }

std::string build_name(Build b) {
  return b == Build::none ? "none" : b == Build::inlined ? "inlined" : "separate (-rdc)";
}

std::string case_label(const Case& k) {
  std::string label = std::string(k.caller == Caller::compute ? "compute" : "stream") + ", " +
                      std::to_string(k.live) + " live";
  if (k.variant == Variant::none) {
    return label + ", " + variant_name(k.variant) + " (" + path_name(k.path) + " run)";
  }
  label += ", " + std::string(path_name(k.path)) + " " +
           (k.build == Build::inlined ? "inlined" : "separate") + ", " + variant_name(k.variant);
  if (k.messages) label += ", " + std::to_string(k.messages) + " x " + std::to_string(k.bytes) + " B";
  return label;
}

void add_resources(Result& r, const char* prefix, const Resources& res) {
  const std::string p = prefix;
  r.knobs.push_back({p + "registers_per_thread", std::to_string(res.attributes.numRegs)});
  r.knobs.push_back({p + "local_bytes_per_thread", std::to_string(res.attributes.localSizeBytes)});
  r.knobs.push_back({p + "resident_blocks_per_sm", std::to_string(res.blocks_per_sm)});
}

// Useful work of one launch, in the unit of `useful work`: FMAs (GFMA/s) or bytes (GB/s).
double work_of(const Config& c, const Case& k) {
  const double per_step = k.caller == Caller::compute ? double{KERNEL_COST_ROUNDS} * k.live
                                                      : 4.0 * k.live;
  return per_step * steps_of(c, k.caller) * c.blocks * KERNEL_COST_THREADS;
}

Result base_result(const Bench& b, const Case& k, const Resources& own, const Resources& baseline) {
  const Config& c = b.config;
  Result r;
  r.experiment = "gpu-kernel-cost";
  r.label = case_label(k);
  r.engine = k.path == Path::mini_gda ? "gpu-kernel" : "host-thread";
  r.placement = k.path == Path::mini_gda ? "gpu" : "host";
  r.submitter = k.path == Path::mini_gda ? "gpu-thread" : "proxy-worker";
  r.pe_layout = k.path == Path::mini_gda ? "1 NIC, loopback QPs (one per block), 1 GPU"
                                         : "1 process, 1 GPU, host workers, loopback QP per worker";
  r.knobs = {{"path", path_name(k.path)},
             {"caller", k.caller == Caller::compute ? "compute" : "stream"},
             {"live_values", std::to_string(k.live)},
             {"build", build_name(k.build)},
             {"variant", variant_name(k.variant)},
             {"messages_per_block", std::to_string(k.messages)},
             {"bytes", std::to_string(k.bytes)},
             {"blocks", std::to_string(c.blocks)},
             {"threads_per_block", std::to_string(KERNEL_COST_THREADS)},
             {"steps", std::to_string(steps_of(c, k.caller))}};
  add_resources(r, "", own);
  if (k.variant != Variant::none) add_resources(r, "baseline_", baseline);
  const int resident = std::max(1, own.blocks_per_sm * b.caller_sms);
  r.knobs.push_back({"caller_sms", std::to_string(b.caller_sms)});
  r.knobs.push_back({"waves", std::to_string((c.blocks + resident - 1) / resident)});
  r.knobs.push_back({"resources_from",
                     "cudaFuncGetAttributes (numRegs; localSizeBytes is stack and spills together) "
                     "and cudaOccupancyMaxActiveBlocksPerMultiprocessor at 256 threads"});
  for (auto& knob : b.rig.knobs()) r.knobs.push_back(knob);
  return r;
}

// The device's failure word (a failed message throws, naming it), then the payload check of a
// case that sent messages.
bool check_case(const Bench& b, const Case& k) {
  uint32_t failure[2] = {0, 0};
  b.rig.read(failure, b.args.failure, 2);
  if (failure[0] != 0) {
    const bool proxy = failure[0] & 0x100;
    throw Error("gpu-kernel-cost: " + case_label(k) + ": block " + std::to_string(failure[1]) +
                "'s message failed with " + (proxy ? "proxy" : "gda") + " status " +
                std::to_string(failure[0] & 0xff));
  }
  return k.messages == 0 || b.rig.check_and_clear(k.messages, k.bytes, b.config.blocks);
}

// The baseline alone (`runs` launches), or a variant paired with the baseline launched just
// before it in each run: loss = 1 - baseline time / variant time (the same useful work).
Result measure(const Bench& b, const Case& k, const Case& baseline, const Resources& own,
               const Resources& base) {
  const Config& c = b.config;
  const bool compute = k.caller == Caller::compute;
  Metric loss{"throughput loss", "%", {}}, work{"useful work", compute ? "GFMA/s" : "GB/s", {}},
      time{"kernel time", "ms", {}};
  double clock_sum = 0;
  launch(b, k);  // warm-up: caches, clocks, the queues' first entries
  for (uint32_t run = 0; run < c.runs; ++run) {
    const Launch before = k.variant == Variant::none ? Launch{} : launch(b, baseline);
    const Launch mine = launch(b, k);
    clock_sum += mine.mhz;
    work.runs.push_back(one_value(work_of(c, k) / mine.ns));
    time.runs.push_back(one_value(mine.ns / 1e6));
    if (k.variant != Variant::none) loss.runs.push_back(one_value(100 * (1 - before.ns / mine.ns)));
  }
  Result r = base_result(b, k, own, base);
  r.metrics = {work, time};
  if (k.variant != Variant::none) r.metrics.insert(r.metrics.begin(), loss);
  r.payload_validated = check_case(b, k);
  char mhz[32];
  std::snprintf(mhz, sizeof mhz, "%.0f", clock_sum / c.runs);
  r.environment = {{"sm_clock_mhz", mhz},
                   {"timing", "%globaltimer, first block start to last block end; the completion "
                              "drain is a second kernel, not timed"}};
  return r;
}

std::vector<Case> variants_of(const Config& c, const Case& base) {
  std::vector<Case> out;
  for (const std::string& build : c.builds) {
    Case k = base;
    k.build = build == "inlined" ? Build::inlined : Build::separate;
    for (const std::string& v : c.variants) {
      if (v == "code-only") {
        k.variant = Variant::code_only;
        out.push_back(k);
        continue;
      }
      k.variant = v == "send" ? Variant::send : Variant::send_wait;
      for (uint64_t m : c.messages) {
        for (uint64_t bytes : c.sizes) {
          k.messages = static_cast<uint32_t>(m);
          k.bytes = static_cast<uint32_t>(bytes);
          out.push_back(k);
        }
      }
      k.messages = 0, k.bytes = 8;
    }
  }
  for (Case& k : out) k.kernel = kernel_for(k);
  return out;
}

// Every caller and live-value count of one path: its baseline, then its variants.
using Group = std::pair<Case, std::vector<Case>>;

std::vector<Group> groups_of(const Config& c, Path path) {
  std::vector<Group> groups;
  for (const std::string& caller : c.callers) {
    for (uint64_t live : c.live) {
      Case base{path, caller == "compute" ? Caller::compute : Caller::stream,
                static_cast<uint32_t>(live), Build::none, Variant::none};
      base.kernel = kernel_for(base);
      groups.emplace_back(base, variants_of(c, base));
    }
  }
  return groups;
}

std::unique_ptr<KernelCostRig> make_rig(const Config& c, Path path) {
  const size_t slot = *std::max_element(c.sizes.begin(), c.sizes.end());
  return path == Path::mini_gda ? make_gda_rig(c.rig, c.blocks, slot)
                                : make_proxy_rig(c.rig.device, c.blocks, slot);
}

// One path: its rig, every kernel's resources (queried before the engine starts: both calls
// load modules), then every group.
int run_path(const Config& c, Path path, Report& report, Progress& progress) {
  const std::unique_ptr<KernelCostRig> rig = make_rig(c, path);
  const KernelCostArgs args = allocate(*rig, c.blocks);
  const std::vector<Group> groups = groups_of(c, path);
  std::vector<std::pair<const void*, Resources>> resources;
  std::vector<const void*> kernels;
  auto resources_for = [&](const void* kernel) {
    for (const auto& [k, r] : resources) {
      if (k == kernel) return r;
    }
    resources.emplace_back(kernel, resources_of(kernel));
    kernels.push_back(kernel);
    return resources.back().second;
  };
  for (const auto& [base, variants] : groups) {
    resources_for(base.kernel);
    for (const Case& k : variants) resources_for(k.kernel);
  }
  rig->start(kernels);
  const Bench bench{*rig, args, c, rig->caller_sms()};
  int status = 0;
  for (const auto& [base, variants] : groups) {
    const Resources base_resources = resources_for(base.kernel);
    report.add(measure(bench, base, base, base_resources, base_resources));
    progress.done(case_label(base));
    for (const Case& k : variants) {
      Result r = measure(bench, k, base, resources_for(k.kernel), base_resources);
      if (!r.payload_validated) status = 1;
      report.add(std::move(r));
      progress.done(case_label(k));
    }
  }
  return status;
}

// Four blocks per SM the callers have when --blocks is 0: the GPU engine's SMs are not theirs
// (mini-proxy runs with the same launch shape, so that both paths' rows compare).
uint32_t default_blocks(const Config& c) {
  int sms = 0;
  check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, c.rig.device),
             "gpu-kernel-cost: SM count");
  const int left = sms - static_cast<int>(c.rig.engine_ctas);
  if (left < 1) {
    throw InvalidArgument("--engine-ctas " + std::to_string(c.rig.engine_ctas) + " leaves no SM of " +
                          std::to_string(sms) + " to the caller kernels");
  }
  return std::min<uint32_t>(MAX_BLOCKS, BLOCKS_PER_CALLER_SM * left);
}

int run(Config c, Report& report) {
  if (c.blocks == 0) c.blocks = default_blocks(c);
  size_t cases = 0;
  for (const Group& g : groups_of(c, Path::mini_gda)) cases += 1 + g.second.size();
  Progress progress("gpu-kernel-cost", cases * c.paths.size());
  int status = 0;
  for (const std::string& p : c.paths) {
    status |= run_path(c, p == "mini-gda" ? Path::mini_gda : Path::mini_proxy, report, progress);
  }
  return status;
}

std::vector<uint64_t> live_values(const Arguments& a) {
  std::vector<uint64_t> out;
  for (const std::string& v : a.choices("live", "8,16", {"8", "16"},
                                             "live values per thread kept across the call site (Figure 9's N), a comma list")) out.push_back(std::stoul(v));
  return out;
}

void read_flags(const Arguments& a, Config& c) {
  const bool quick = a.flag("quick", "1,024 compute and 256 streaming steps per launch, 2 runs");
  c.paths = a.choices("path", "mini-gda,mini-proxy", {"mini-gda", "mini-proxy"},
                        "whose send: mini-gda (one QP per block) or mini-proxy (4 workers, 32 rings), a comma list");
  c.callers = a.choices("caller", "compute,stream", {"compute", "stream"},
                          "the caller's useful work: FMA chains (compute) or memory streaming, a comma list");
  c.live = live_values(a);
  c.builds = a.choices("build", "inlined,separate", {"inlined", "separate"},
                         "the send inlined into the caller, or separately compiled (-rdc, a real call), a comma list");
  c.variants = a.choices("variants", "code-only,send,send-wait", {"code-only", "send", "send-wait"},
                           "code only; send, then compute; send, wait, then compute (the paper's names), a comma list");
  c.messages = a.integers("messages", {1, 4, 16}, 1, 64, "messages each block sends per launch, a comma list");
  c.sizes = a.sizes({8, 7168}, 1, 1u << 20, "payload of one message");
  // One QP per block: --blocks above 528 is refused (the rig's limit here, the paper's 528);
  // 0: four per SM left to the callers (BLOCKS_PER_CALLER_SM).
  c.blocks = static_cast<uint32_t>(a.integer("blocks", 0, 0, MAX_BLOCKS,
                                                  "caller blocks of 256 threads, one QP each (528: the paper's); 0: four per SM left to the callers"));
  c.compute_steps = static_cast<uint32_t>(a.integer("compute-steps", quick ? 1024 : c.compute_steps, 2, 1u << 24,
                                                         "steps of the compute caller per launch (messages are spread between them)"));
  c.stream_steps = static_cast<uint32_t>(a.integer("stream-steps", quick ? 256 : c.stream_steps, 2, 1u << 24,
                                                        "steps of the streaming caller per launch (messages are spread between them)"));
  c.runs = static_cast<uint32_t>(a.integer("runs", quick ? 2 : c.runs, 1, 100,
                                                "paired launches (with and without communication) per case"));
  c.rig.device = static_cast<int>(a.integer("device", 0, 0, 64, flag_help::DEVICE));
  // The messages are few (16 per block at most): 4 engine CTAs serve them and leave more SMs.
  c.rig.engine_ctas = static_cast<uint32_t>(a.integer("engine-ctas", 4, 1, 1024, flag_help::ENGINE_CTAS));
  c.rig.engine_warps_per_cta = static_cast<uint32_t>(
      a.integer("engine-warps", c.rig.engine_warps_per_cta, 1, softnic::MAX_ENGINE_WARPS_PER_CTA,
                flag_help::ENGINE_WARPS));
  c.rig.nic_profile = a.text("nic-profile", "fast", flag_help::NIC_PROFILE);
  softnic::timing_profile(c.rig.nic_profile);  // refused here, by name, before anything runs
}

int run_gpu_kernel_cost(const Arguments& a, Report& report) {
  a.provider({"softnic"});
  Config c;
  read_flags(a, c);
  if (a.flag("raw", "refused: gpu-kernel-cost times whole launches (one time per run), it has no per-sample times")) {
    throw InvalidArgument("--raw: gpu-kernel-cost reports one time per launch (its runs), no "
                          "per-sample times to keep");
  }
  a.check_all_used();
  const uint64_t most = *std::max_element(c.messages.begin(), c.messages.end());
  if (std::min(c.compute_steps, c.stream_steps) <= most) {
    throw InvalidArgument("--compute-steps and --stream-steps must exceed --messages' largest (" +
                          std::to_string(most) + "): messages are spread between steps");
  }
  if (skip_without_cuda_device()) return 0;
  return run(c, report);
}

const bool registered = register_experiment(
    {"gpu-kernel-cost",
     "Figure 9: useful-work throughput loss of a compute and a streaming caller carrying, sending "
     "and waiting on mini-gda and mini-proxy messages, inlined and -rdc, with registers and "
     "residency",
     run_gpu_kernel_cost, true});

}  // namespace
}  // namespace dissect::bench::gpu
