// `dissect gpu-kernel-cost`: §4.3.2, Figure 9 and Table 14, on the GPU. A compute (FMA) caller
// and a memory-streaming caller keep N live values per thread across the communication call site,
// in blocks of 256 threads, four per SM (the paper's 528 on 132 SMs; see BLOCKS_PER_CALLER_SM);
// each block sends 0, 1, 4 or 16 messages of 8 B or 7 KiB on its
// own QP (mini-gda, one QP per block, on the loopback rig). Variants, the paper's names:
//   no communication code      the baseline kernel: the call site is not compiled in
//   code only                  compiled in, its branch never taken (0 messages)
//   send, then compute         thread 0 submits each message and its warp computes on
//   send, wait, then compute   thread 0 waits for each message's completion first
// each in two builds: the send inlined into the caller, and separately compiled (-rdc, a real
// call: kernel_cost/). The throughput loss is against the no-communication kernel launched just
// before it (paired launches, `--runs` pairs), times exclude the final completion drain (a second
// kernel). Beside each loss: the kernel's registers per thread and local memory per thread (stack
// and spills together: cudaFuncGetAttributes cannot tell them apart; ptxas -v can) and resident
// blocks per SM (cudaOccupancyMaxActiveBlocksPerMultiprocessor), which explain a loss.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "dissect/bench/experiment.h"
#include "dissect/bench/progress.h"
#include "dissect/common/cuda.h"
#include "dissect/common/error.h"
#include "dissect/softnic/gpu_engine.h"
#include "kernel_cost_kernel.cuh"

namespace dissect::bench::gpu {
namespace {

// One QP per block on one softnic: the rig runs the paper's 528 here and no more (gpu-rate's
// limit on the same rig).
constexpr uint32_t MAX_BLOCKS = 528;
// The paper's 528 blocks are four per SM of a 132-SM GPU. Here the engine's CTAs hold whole SMs
// (each fills an SM's registers: softnic/gpu_engine.h), so by default the launch keeps four
// blocks per SM left to the callers; otherwise a kernel at exactly four resident blocks per SM
// would pay a second wave that the paper's did not. --blocks 528 launches the paper's count.
constexpr uint32_t BLOCKS_PER_CALLER_SM = 4;
constexpr uint32_t STREAM_ROWS = 512;  // 512 rows x 135,168 threads x 4 B = 277 MB, > L2

struct Config {
  std::vector<std::string> callers, builds, variants;
  std::vector<uint64_t> live, messages, sizes;
  uint32_t blocks = 0, compute_steps = 8192, stream_steps = 2048, runs = 5;
  LoopbackOptions rig;
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

// One kernel to measure: its build, what it sends, and its resources.
struct Case {
  Caller caller;
  uint32_t live;
  Build build;
  Variant variant;
  uint32_t messages = 0, bytes = 8;
  const void* kernel = nullptr;
};

template <Caller C, uint32_t L>
const void* inline_kernel(Build b) {
  return b == Build::none ? reinterpret_cast<const void*>(&kernel_cost<C, L, Build::none>)
                          : reinterpret_cast<const void*>(&kernel_cost<C, L, Build::inlined>);
}

const void* kernel_for(Caller c, uint32_t live, Build b) {
  if (b == Build::separate) return separate_kernel_cost(c, live);
  const bool compute = c == Caller::compute;
  if (live == 8) return compute ? inline_kernel<Caller::compute, 8>(b) : inline_kernel<Caller::stream, 8>(b);
  return compute ? inline_kernel<Caller::compute, 16>(b) : inline_kernel<Caller::stream, 16>(b);
}

// After each launch: waits for every block's messages (outside the timed span).
__global__ void drain_kernel(const LoopbackTarget* targets, uint32_t* failure) {
  const auto s = gda::quiet<KernelCostPolicy, gda::Sharing::exclusive>(targets[blockIdx.x].qp);
  if (s != gda::Status::ok && atomicCAS(&failure[0], 0u, static_cast<uint32_t>(s)) == 0) {
    failure[1] = blockIdx.x;
  }
}

__global__ void fill_sources(const LoopbackTarget* targets, uint32_t bytes) {
  for (uint32_t i = threadIdx.x; i < bytes; i += blockDim.x) {
    targets[blockIdx.x].src[i] = kernel_cost_byte(blockIdx.x, i);
  }
}

// After a case: counts destination bytes that are not the last message's, then clears them.
__global__ void check_and_clear(const LoopbackTarget* targets, uint32_t messages, uint32_t bytes,
                                unsigned long long* mismatches) {
  const LoopbackTarget& t = targets[blockIdx.x];
  const uint64_t value = kernel_cost_value(blockIdx.x, messages - 1);
  uint32_t wrong = 0;
  for (uint32_t i = threadIdx.x; i < bytes; i += blockDim.x) {
    const uint8_t want = bytes <= 8 ? static_cast<uint8_t>(value >> (8 * i)) : t.src[i];
    wrong += t.dst[i] != want;
    t.dst[i] = 0;
  }
  if (wrong) atomicAdd(mismatches, wrong);
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

// The device buffers of the runs, allocated before the engine starts (loopback_qps.h).
struct Buffers {
  KernelCostArgs args{};
  unsigned long long* mismatches = nullptr;
};

Buffers allocate(LoopbackQps& rig, const Config& c) {
  Buffers b;
  const size_t threads = size_t{c.blocks} * KERNEL_COST_THREADS;
  b.args.targets = rig.targets();
  b.args.stream_rows = STREAM_ROWS;
  b.args.stream = static_cast<const float*>(rig.scratch(sizeof(float) * threads * STREAM_ROWS));
  b.args.out = static_cast<float*>(rig.scratch(sizeof(float) * threads));
  b.args.block_start = static_cast<unsigned long long*>(rig.scratch(8 * c.blocks));
  b.args.block_end = static_cast<unsigned long long*>(rig.scratch(8 * c.blocks));
  b.args.clock = static_cast<unsigned long long*>(rig.scratch(16));
  b.args.failure = static_cast<uint32_t*>(rig.scratch(8));
  b.mismatches = static_cast<unsigned long long*>(rig.scratch(8));
  return b;
}

// One launch and its drain: the kernel's span (first block start to last block end, ns) and its
// effective SM clock (block 0's clock64 against %globaltimer).
struct Launch {
  double ns = 0, mhz = 0;
};

Launch launch(LoopbackQps& rig, const Buffers& b, const Case& k, uint32_t steps, uint32_t blocks) {
  KernelCostArgs args = b.args;
  args.steps = steps;
  args.messages = k.messages;
  args.bytes = k.bytes;
  args.wait = k.variant == Variant::send_wait;
  void* params[] = {&args};
  check_cuda(cudaLaunchKernel(k.kernel, blocks, KERNEL_COST_THREADS, params, 0, rig.stream()),
             "gpu-kernel-cost: launch the caller kernel");
  drain_kernel<<<blocks, 1, 0, rig.stream()>>>(args.targets, args.failure);
  check_cuda(cudaGetLastError(), "gpu-kernel-cost: launch the drain kernel");
  rig.wait("gpu-kernel-cost: caller kernel and drain");
  std::vector<unsigned long long> start(blocks), end(blocks), clock(2);
  rig.read(start.data(), args.block_start, blocks);
  rig.read(end.data(), args.block_end, blocks);
  rig.read(clock.data(), args.clock, 2);
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

std::string build_name(Build b) {
  return b == Build::none ? "none" : b == Build::inlined ? "inlined" : "separate (-rdc)";
}

std::string case_label(const Case& k) {
  std::string label = std::string(k.caller == Caller::compute ? "compute" : "stream") + ", " +
                      std::to_string(k.live) + " live";
  if (k.variant == Variant::none) return label + ", " + variant_name(k.variant);
  label += ", mini-gda " + std::string(k.build == Build::inlined ? "inlined" : "separate") + ", " +
           variant_name(k.variant);
  if (k.messages) label += ", " + std::to_string(k.messages) + " x " + std::to_string(k.bytes) + " B";
  return label;
}

void add_resources(Result& r, const char* prefix, const Resources& res) {
  const std::string p = prefix;
  r.knobs.push_back({p + "registers_per_thread", std::to_string(res.attributes.numRegs)});
  r.knobs.push_back({p + "local_bytes_per_thread", std::to_string(res.attributes.localSizeBytes)});
  r.knobs.push_back({p + "resident_blocks_per_sm", std::to_string(res.blocks_per_sm)});
}


// What a measurement shares: the rig, its buffers, the launch shape and the SMs left to callers.
struct Bench {
  LoopbackQps& rig;
  const Buffers& buffers;
  const Config& config;
  int caller_sms;  // the device's SMs less the engine's CTAs (each fills an SM's registers)
};

uint32_t steps_of(const Config& c, Caller caller) {
  return caller == Caller::compute ? c.compute_steps : c.stream_steps;
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
  r.engine = "gpu-kernel";
  r.placement = "gpu";
  r.submitter = "gpu-thread";
  r.pe_layout = "1 NIC, loopback QPs (one per block), 1 GPU";
  r.knobs = {{"path", "mini-gda"},
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
  r.knobs.push_back({"engine_warps", std::to_string(c.rig.engine_ctas) + " CTAs x " +
                                         std::to_string(c.rig.engine_warps_per_cta) + " warps"});
  r.knobs.push_back({"nic_profile", c.rig.nic_profile});
  return r;
}

// Reads the device's failure word and the payload check of a case that sent messages.
bool check_case(const Bench& b, const Case& k, unsigned long long* mismatches_seen) {
  uint32_t failure[2] = {0, 0};
  b.rig.read(failure, b.buffers.args.failure, 2);
  if (failure[0] != 0) {
    throw Error("gpu-kernel-cost: " + case_label(k) + ": block " + std::to_string(failure[1]) +
                "'s message failed with gda status " + std::to_string(failure[0]));
  }
  if (k.messages == 0) return true;
  check_and_clear<<<b.config.blocks, KERNEL_COST_THREADS, 0, b.rig.stream()>>>(
      b.buffers.args.targets, k.messages, k.bytes, b.buffers.mismatches);
  check_cuda(cudaGetLastError(), "gpu-kernel-cost: launch the payload check");
  b.rig.wait("gpu-kernel-cost: payload check");
  unsigned long long total = 0;
  b.rig.read(&total, b.buffers.mismatches, 1);
  const bool valid = total == *mismatches_seen;
  *mismatches_seen = total;
  return valid;
}

// The baseline alone (`runs` launches), or a variant paired with the baseline launched just
// before it in each run: loss = 1 - baseline time / variant time (the same useful work).
Result measure(const Bench& b, const Case& k, const Case& baseline, const Resources& own,
               const Resources& base, unsigned long long* mismatches_seen) {
  const Config& c = b.config;
  const uint32_t steps = steps_of(c, k.caller);
  const bool gfma = k.caller == Caller::compute;
  Metric loss{"throughput loss", "%", {}}, work{"useful work", gfma ? "GFMA/s" : "GB/s", {}},
      time{"kernel time", "ms", {}};
  double clock_sum = 0;
  launch(b.rig, b.buffers, k, steps, c.blocks);  // warm-up: caches, clocks, the QPs' first WQEs
  for (uint32_t run = 0; run < c.runs; ++run) {
    const Launch before = k.variant == Variant::none
                              ? Launch{}
                              : launch(b.rig, b.buffers, baseline, steps, c.blocks);
    const Launch mine = launch(b.rig, b.buffers, k, steps, c.blocks);
    clock_sum += mine.mhz;
    work.runs.push_back(one_value(work_of(c, k) / mine.ns));
    time.runs.push_back(one_value(mine.ns / 1e6));
    if (k.variant != Variant::none) loss.runs.push_back(one_value(100 * (1 - before.ns / mine.ns)));
  }
  Result r = base_result(b, k, own, base);
  r.metrics = {work, time};
  if (k.variant != Variant::none) r.metrics.insert(r.metrics.begin(), loss);
  r.payload_validated = check_case(b, k, mismatches_seen);
  char mhz[32];
  std::snprintf(mhz, sizeof mhz, "%.0f", clock_sum / c.runs);
  r.environment = {{"sm_clock_mhz", mhz},
                   {"timing", "%globaltimer, first block start to last block end; the completion "
                              "drain is a second kernel, not timed"}};
  return r;
}

std::vector<Case> variants_of(const Config& c, Caller caller, uint32_t live) {
  std::vector<Case> out;
  for (const std::string& build : c.builds) {
    const Build b = build == "inlined" ? Build::inlined : Build::separate;
    for (const std::string& v : c.variants) {
      if (v == "code-only") {
        out.push_back(Case{caller, live, b, Variant::code_only});
        continue;
      }
      for (uint64_t m : c.messages) {
        for (uint64_t bytes : c.sizes) {
          out.push_back(Case{caller, live, b, v == "send" ? Variant::send : Variant::send_wait,
                             static_cast<uint32_t>(m), static_cast<uint32_t>(bytes)});
        }
      }
    }
  }
  for (Case& k : out) k.kernel = kernel_for(caller, live, k.build);
  return out;
}

LoopbackOptions rig_options(const Config& c) {
  LoopbackOptions o = c.rig;
  o.qps = c.blocks;
  o.sq_wqebbs = 256;  // 64 messages of one WQEBB each and room to spare
  o.buffer_bytes = std::max<size_t>(4096, *std::max_element(c.sizes.begin(), c.sizes.end()));
  return o;
}

int caller_sms(const Config& c) {
  int sms = 0;
  check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, c.rig.device),
             "gpu-kernel-cost: SM count");
  const int left = sms - static_cast<int>(c.rig.engine_ctas);
  if (left < 1) {
    throw InvalidArgument("--engine-ctas " + std::to_string(c.rig.engine_ctas) + " leaves no SM of " +
                          std::to_string(sms) + " to the caller kernels");
  }
  return left;
}

int run(Config c, Report& report) {
  const int sms = caller_sms(c);
  if (c.blocks == 0) c.blocks = std::min<uint32_t>(MAX_BLOCKS, BLOCKS_PER_CALLER_SM * sms);
  LoopbackQps rig(rig_options(c));
  const Buffers buffers = allocate(rig, c);
  fill_sources<<<c.blocks, KERNEL_COST_THREADS, 0, rig.stream()>>>(
      rig.targets(), static_cast<uint32_t>(rig_options(c).buffer_bytes));
  check_cuda(cudaGetLastError(), "gpu-kernel-cost: launch the source fill");
  rig.synchronize("gpu-kernel-cost: source fill");
  const Bench bench{rig, buffers, c, sms};
  std::vector<std::pair<Case, std::vector<Case>>> groups;
  std::vector<const void*> kernels = {reinterpret_cast<const void*>(&drain_kernel),
                                      reinterpret_cast<const void*>(&check_and_clear)};
  size_t cases = 0;
  for (const std::string& caller_name : c.callers) {
    const Caller caller = caller_name == "compute" ? Caller::compute : Caller::stream;
    for (uint64_t live : c.live) {
      Case base{caller, static_cast<uint32_t>(live), Build::none, Variant::none};
      base.kernel = kernel_for(caller, base.live, Build::none);
      groups.emplace_back(base, variants_of(c, caller, base.live));
      kernels.push_back(base.kernel);
      for (const Case& k : groups.back().second) kernels.push_back(k.kernel);
      cases += 1 + groups.back().second.size();
    }
  }
  // Before the engine starts: both queries load the kernels' modules (loopback_qps.h).
  std::vector<std::pair<const void*, Resources>> resources;
  auto resources_for = [&](const void* kernel) {
    for (const auto& [k, r] : resources) {
      if (k == kernel) return r;
    }
    resources.emplace_back(kernel, resources_of(kernel));
    return resources.back().second;
  };
  for (const void* k : kernels) resources_for(k);
  rig.start(kernels, "gpu-kernel-cost");
  Progress progress("gpu-kernel-cost", cases);
  unsigned long long mismatches = 0;
  int status = 0;
  for (const auto& [base, variants] : groups) {
    const Resources base_resources = resources_for(base.kernel);
    report.add(measure(bench, base, base, base_resources, base_resources, &mismatches));
    progress.done(case_label(base));
    for (const Case& k : variants) {
      Result r = measure(bench, k, base, resources_for(k.kernel), base_resources, &mismatches);
      if (!r.payload_validated) status = 1;
      report.add(std::move(r));
      progress.done(case_label(k));
    }
  }
  return status;
}

std::vector<uint64_t> live_values(const Arguments& a) {
  std::vector<uint64_t> out;
  for (const std::string& v : a.choices("live", "8,16", {"8", "16"})) out.push_back(std::stoul(v));
  return out;
}

int run_gpu_kernel_cost(const Arguments& a, Report& report) {
  a.provider({"softnic"});
  Config c;
  const bool quick = a.flag("quick");
  c.callers = a.choices("caller", "compute,stream", {"compute", "stream"});
  c.live = live_values(a);
  c.builds = a.choices("build", "inlined,separate", {"inlined", "separate"});
  c.variants = a.choices("variants", "code-only,send,send-wait", {"code-only", "send", "send-wait"});
  c.messages = a.integers("messages", {1, 4, 16}, 1, 64);
  c.sizes = a.sizes({8, 7168}, 1, 1u << 20);
  // One QP per block: --blocks above 528 is refused (the rig's limit here, the paper's 528);
  // 0: four per SM left to the callers (BLOCKS_PER_CALLER_SM).
  c.blocks = static_cast<uint32_t>(a.integer("blocks", 0, 0, MAX_BLOCKS));
  // The messages are few (16 per block at most): 4 engine CTAs serve them and leave more SMs.
  c.rig.engine_ctas = 4;
  c.compute_steps = static_cast<uint32_t>(a.integer("compute-steps", quick ? 1024 : c.compute_steps, 2, 1u << 24));
  c.stream_steps = static_cast<uint32_t>(a.integer("stream-steps", quick ? 256 : c.stream_steps, 2, 1u << 24));
  c.runs = static_cast<uint32_t>(a.integer("runs", quick ? 2 : c.runs, 1, 100));
  c.rig.device = static_cast<int>(a.integer("device", 0, 0, 64));
  c.rig.engine_ctas = static_cast<uint32_t>(a.integer("engine-ctas", c.rig.engine_ctas, 1, 1024));
  c.rig.engine_warps_per_cta = static_cast<uint32_t>(
      a.integer("engine-warps", c.rig.engine_warps_per_cta, 1, softnic::MAX_ENGINE_WARPS_PER_CTA));
  c.rig.nic_profile = a.text("nic-profile", "fast");
  softnic::timing_profile(c.rig.nic_profile);  // refused here, by name, before anything runs
  a.check_all_used();
  const uint64_t most = *std::max_element(c.messages.begin(), c.messages.end());
  if (std::min(c.compute_steps, c.stream_steps) <= most) {
    throw InvalidArgument("--compute-steps and --stream-steps must exceed --messages' largest (" +
                          std::to_string(most) + "): messages are spread between steps");
  }
  if (softnic::gpu_runtime_init() == 0) {
    std::fprintf(stderr, "no CUDA device: skipped\n");
    return 0;
  }
  return run(c, report);
}

const bool registered = register_experiment(
    {"gpu-kernel-cost",
     "Figure 9: useful-work throughput loss of a compute and a streaming caller carrying, sending "
     "and waiting on mini-gda messages, inlined and -rdc, with registers and residency",
     run_gpu_kernel_cost, true});

}  // namespace
}  // namespace dissect::bench::gpu
