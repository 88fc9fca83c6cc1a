#include "gpu_command.h"
#include "rate_run.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "dissect/bench/flag_help.h"
#include "dissect/bench/progress.h"
#include "dissect/common/error.h"
#include "dissect/nic/qp_counters.h"
#include "harness.cuh"
#include "nic_ceiling.h"
#include "peer_rate.h"
#include "rate_bound.h"
#include "rate_kernel.cuh"

namespace dissect::bench::gpu {
namespace {

constexpr uint32_t NVSHMEM_MAX_DEPTH = 32768;  // NVSHMEMI_IBGDA_MAX_QP_DEPTH

RateSharing sharing_of(const std::string& name) {
  if (name == "exclusive") return RateSharing::exclusive;
  if (name == "shared") return RateSharing::shared;
  if (name == "handoff") return RateSharing::handoff;
  if (name == "cooperative") return RateSharing::cooperative;
  throw InvalidArgument("sharing '" + name + "': one of exclusive, shared, handoff, cooperative");
}

RatePayload payload_of(const std::string& name) {
  if (name == "value") return RatePayload::value;
  if (name == "inline") return RatePayload::inline_copy;
  if (name == "pointer") return RatePayload::pointer;
  throw InvalidArgument("payload '" + name + "': one of value, inline, pointer");
}

std::string hex(uint32_t v) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%x", v);
  return text;
}

uint32_t wqebbs_per_message(const RateConfig& c) {
  return payload_of(c.payload) == RatePayload::pointer ? gda::write_wqebbs()
                                                       : gda::inline_write_wqebbs(c.payload_bytes);
}

void refuse(bool bad, const std::string& why) {
  if (bad) throw InvalidArgument(why);
}

// Messages each thread posts: about 2^22 in all unless given, a multiple of what one post takes.
uint32_t messages_per_thread(const RateConfig& c, uint32_t wanted) {
  if (c.path != "mini-gda") {  // one message per thread and post, for both libraries
    return std::max<uint32_t>(wanted ? wanted : std::clamp<uint32_t>((1u << 22) / c.threads, 256, 200'000), 8);
  }
  const uint32_t qps_per_thread = c.qps > c.threads ? c.qps / c.threads : 1;
  const uint32_t unit = sharing_of(c.sharing) == RateSharing::cooperative
                            ? std::max<uint32_t>(c.batch / 32, 1)
                            : (sharing_of(c.sharing) == RateSharing::handoff ? 1 : c.batch * qps_per_thread);
  const uint32_t m = wanted ? wanted : std::clamp<uint32_t>((1u << 22) / c.threads, 256, 200'000);
  return std::max(unit, m / unit * unit);
}

uint32_t signal_period(const RateConfig& c) {
  if (c.signal_period) return c.signal_period;
  return (64 + c.batch - 1) / c.batch * c.batch;
}

// The WQEBBs a QP's submitters may leave outstanding before they wait for completions: the send
// queue (mini-gda's and NVSHMEM's reservations wait for room), or GDAKI's lag: each thread waits for
// the ticket it took one signal period earlier (peers/gdaki_rate.cu), so a QP's threads hold at
// most two periods each.
uint64_t outstanding_limit(const RateConfig& c) {
  if (c.path == "gdaki") return 2 * uint64_t{signal_period(c)} * std::max<uint32_t>(c.threads / c.qps, 1);
  return c.sq_wqebbs;
}

// The WQEBBs one QP's submitters post in the timed pass (the warm-up's were drained before it).
uint64_t run_wqebbs_per_qp(const RateConfig& c, uint32_t messages_per_thread) {
  const uint32_t threads_per_qp = std::max<uint32_t>(c.threads / c.qps, 1);
  const uint32_t qps_per_thread = std::max<uint32_t>(c.qps / c.threads, 1);
  return uint64_t{threads_per_qp} * messages_per_thread / qps_per_thread * wqebbs_per_message(c);
}

double model_ceiling(const RateConfig& c) {
  return nic_model_ceiling(c.device, c.engine_ctas, c.engine_warps_per_cta, c.nic_profile, c.qps,
                           c.payload_bytes);
}

struct Launch {
  RateArgs args;
  uint32_t ctas, threads_per_cta;
};

template <typename Policy>
const void* kernel_of(RateSharing k) {
  switch (k) {
    case RateSharing::exclusive: return reinterpret_cast<const void*>(&rate_kernel<RateSharing::exclusive, Policy>);
    case RateSharing::shared: return reinterpret_cast<const void*>(&rate_kernel<RateSharing::shared, Policy>);
    case RateSharing::handoff: return reinterpret_cast<const void*>(&rate_kernel<RateSharing::handoff, Policy>);
    case RateSharing::cooperative: return reinterpret_cast<const void*>(&rate_kernel<RateSharing::cooperative, Policy>);
  }
  throw InvalidArgument("sharing strategy " + std::to_string(static_cast<uint32_t>(k)));
}

// `counted`: the kernel with telemetry's hooks compiled in (gda::counted), for rows that attach
// telemetry; every other row runs the submit path without them, as a build without telemetry.
const void* kernel_of(RateSharing k, nic::DoorbellPath doorbell, bool counted) {
  if (doorbell == nic::DoorbellPath::cpu_assisted) {
    return counted ? kernel_of<gda::counted<CpuAssistedPolicy>>(k) : kernel_of<CpuAssistedPolicy>(k);
  }
  return counted ? kernel_of<gda::counted<DirectPolicy>>(k) : kernel_of<DirectPolicy>(k);
}

void launch(const void* kernel, Launch& l, cudaStream_t stream) {
  void* args[] = {&l.args};
  check_cuda(cudaLaunchKernel(kernel, dim3(l.ctas), dim3(l.threads_per_cta), args, 0, stream),
             "launch rate_kernel");
}

// Destination slots hold the last RATE_SLOTS messages of each QP: their values, or the source.
bool validate(const LoopbackQps& q, const RateConfig& c, uint64_t messages_per_qp) {
  const size_t bytes = size_t{RATE_SLOTS} * c.payload_bytes;
  for (uint32_t j = 0; j < c.qps; ++j) {
    std::vector<uint8_t> dst(bytes), src(bytes);
    q.read(dst.data(), q.host_targets()[j].dst, bytes);
    if (payload_of(c.payload) != RatePayload::value) {
      q.read(src.data(), q.host_targets()[j].src, bytes);
      if (dst != src) return false;
      continue;
    }
    for (uint64_t m = messages_per_qp - RATE_SLOTS; m < messages_per_qp; ++m) {
      uint64_t expected = rate_value(m, j), got = 0;
      std::memcpy(&got, dst.data() + (m % RATE_SLOTS) * c.payload_bytes, c.payload_bytes);
      const uint64_t mask = c.payload_bytes >= 8 ? ~0ull : (1ull << (8 * c.payload_bytes)) - 1;
      if ((got & mask) != (expected & mask)) return false;
    }
  }
  return true;
}

struct RunOutcome {
  double mmsg_per_s = 0;
  bool valid = false;
  std::string failure;
  uint64_t deepest_backlog = 0;  // WQEBBs, the fullest QP's (ModelCounters::deepest_backlog)
  double posting_mmsg_per_s = 0; // up to the last post, the drain left out; 0: not measured
};

bool peer_path(const RateConfig& c) { return c.path != "mini-gda"; }

// The sharing names of the libraries' configurations (peer_rate_config).
constexpr const char* GDAKI_SHARING = "DOCA resource sharing GPU";
constexpr const char* NVSHMEM_SHARING = "NVSHMEM warp batch, QP per CTA";

PeerLibrary peer_library(const std::string& path) {
#if DISSECT_HAVE_GDAKI
  if (path == "gdaki") return gdaki_rate_library();
#else
  if (path == "gdaki") {
    throw InvalidArgument("--path gdaki: this build has no GDAKI adapter: NCCL's device headers "
                          "(nccl_device/gin/gdaki/doca_gpunetio, wheel nvidia-nccl-cu13) were not "
                          "found at configure time; run scripts/peer_headers.sh and reconfigure");
  }
#endif
#if DISSECT_HAVE_NVSHMEM_IBGDA
  if (path == "nvshmem-ibgda") return nvshmem_rate_library();
#else
  if (path == "nvshmem-ibgda") {
    throw InvalidArgument("--path nvshmem-ibgda: this build has no NVSHMEM IBGDA adapter: "
                          "non_abi/device/pt-to-pt/ibgda_device.cuh (wheel nvidia-nvshmem-cu13) or "
                          "infiniband/mlx5dv.h were not found at configure time; run "
                          "scripts/peer_headers.sh and reconfigure");
  }
#endif
  throw InvalidArgument("--path " + path + ": one of mini-gda, gdaki, nvshmem-ibgda");
}

// The rig of every rate run: the engine, the profile, the QPs and their depth.
LoopbackOptions loopback_options(const RateConfig& c) {
  LoopbackOptions o;
  o.device = c.device;
  o.engine_ctas = c.engine_ctas;
  o.engine_warps_per_cta = c.engine_warps_per_cta;
  o.nic_profile = c.nic_profile;
  o.qps = c.qps;
  o.sq_wqebbs = c.sq_wqebbs;
  return o;
}

RunOutcome run_once(const RateConfig& c);

// The library's kernel (peer_rate.h) on the same loopback rig, validated as mini-gda's rows are.
RunOutcome run_peer_once(const RateConfig& c) {
  LoopbackOptions o = loopback_options(c);
  o.max_inline = 64;
  o.buffer_bytes = size_t{RATE_SLOTS} * c.payload_bytes;
  o.send_cq_collapsed = c.path == "nvshmem-ibgda";  // NVSHMEM's CQs (nvshmem_ibgda.cuh)
  LoopbackQps q(o);
  PeerRateLaunch l{};
  l.qps = c.qps;
  l.ctas = c.ctas;
  l.threads_per_cta = c.threads / c.ctas;
  l.messages_per_thread = messages_per_thread(c, c.messages_per_thread);
  l.warm_per_thread = messages_per_thread(c, std::max<uint32_t>(l.messages_per_thread / 8, 1));
  l.signal_period = signal_period(c);
  PeerRateOutcome p;
#if DISSECT_HAVE_GDAKI
  if (c.path == "gdaki") p = run_gdaki_rate(q, l);
#endif
#if DISSECT_HAVE_NVSHMEM_IBGDA
  if (c.path == "nvshmem-ibgda") p = run_nvshmem_rate(q, l);
#endif
  RunOutcome out;
  out.failure = p.failure;
  if (!p.failure.empty()) return out;
  out.mmsg_per_s = double(c.threads) * l.messages_per_thread / p.ns * 1e3;
  const uint64_t per_qp =
      uint64_t{c.threads} * (l.warm_per_thread + l.messages_per_thread) / c.qps;
  out.valid = validate(q, c, per_qp);
  if (!out.valid) out.failure = "payload: the last " + std::to_string(RATE_SLOTS) +
                                " slots of some QP do not hold its last messages";
  out.deepest_backlog = q.deepest_backlog();  // warm-up included
  return out;
}

RunOutcome run_once(const RateConfig& c) {
  if (peer_path(c)) return run_peer_once(c);
  LoopbackOptions o = loopback_options(c);
  // Inline payloads need room in the WQE; a pointer write of any size (gpu-goodput) does not.
  o.max_inline = payload_of(c.payload) == RatePayload::pointer ? 64 : std::max<uint32_t>(64, c.payload_bytes);
  o.buffer_bytes = size_t{RATE_SLOTS} * c.payload_bytes;
  o.doorbell = nic::doorbell_path_from_string(c.doorbell);
  LoopbackQps q(o);
  const auto blocks = c.telemetry ? q.attach_telemetry(c.telemetry)
                                  : std::vector<const telemetry::QpCounters*>{};
  Launch l{};
  l.ctas = c.ctas;
  l.threads_per_cta = c.threads / c.ctas;
  l.args.targets = q.targets();
  l.args.threads_per_qp = std::max<uint32_t>(c.threads / c.qps, 1);
  l.args.qps_per_thread = std::max<uint32_t>(c.qps / c.threads, 1);
  l.args.batch = c.batch;
  l.args.signal_period = signal_period(c);
  l.args.payload = payload_of(c.payload);
  l.args.payload_bytes = c.payload_bytes;
  l.args.cta_start = static_cast<unsigned long long*>(q.scratch(8 * c.ctas));
  l.args.cta_end = static_cast<unsigned long long*>(q.scratch(8 * c.ctas));
  l.args.cta_posted = static_cast<unsigned long long*>(q.scratch(8 * c.ctas));
  l.args.failure = static_cast<uint32_t*>(q.scratch(16));
  std::vector<uint8_t> pattern(o.buffer_bytes);
  for (uint32_t j = 0; j < c.qps; ++j) {
    for (size_t b = 0; b < pattern.size(); ++b) pattern[b] = payload_byte(j, uint32_t(b));
    q.write_bytes(q.host_targets()[j].src, pattern.data(), pattern.size());
  }
  const void* kernel =
      kernel_of(sharing_of(c.sharing), nic::doorbell_path_from_string(c.doorbell), c.telemetry_hooks);
  q.start({kernel}, "gpu-rate kernel");
  const uint32_t m = messages_per_thread(c, c.messages_per_thread);
  const uint32_t warm = messages_per_thread(c, std::max<uint32_t>(m / 8, 1));
  RunOutcome out;
  for (uint32_t pass = 0; pass < 2; ++pass) {  // pass 0 warms up and is not timed
    l.args.messages_per_thread = pass == 0 ? warm : m;
    launch(kernel, l, q.stream());
    q.wait("gpu-rate kernel");
    uint32_t failure[3] = {};
    q.read(failure, l.args.failure, 3);
    if (failure[0] != 0) {
      out.failure = std::string("QP ") + std::to_string(failure[1]) + ": " +
                    to_string(static_cast<Status>(failure[0])) + " (SendQueueState::error " +
                    hex(failure[2]) + ")";
      return out;
    }
  }
  std::vector<unsigned long long> start(c.ctas), end(c.ctas), posted(c.ctas);
  q.read(start.data(), l.args.cta_start, c.ctas);
  q.read(end.data(), l.args.cta_end, c.ctas);
  q.read(posted.data(), l.args.cta_posted, c.ctas);
  const auto first = *std::min_element(start.begin(), start.end());
  const double ns = double(*std::max_element(end.begin(), end.end()) - first);
  out.mmsg_per_s = double(c.threads) * m / ns * 1e3;
  out.posting_mmsg_per_s = double(c.threads) * m / double(*std::max_element(posted.begin(), posted.end()) - first) * 1e3;
  const uint64_t per_qp = uint64_t{c.threads} * (warm + m) / c.qps;
  out.valid = validate(q, c, per_qp);
  out.deepest_backlog = q.deepest_backlog();  // warm-up included
  for (const telemetry::QpCounters* block : blocks) {  // the counters saw every WQE, once
    telemetry::QpCounters seen;
    q.read(&seen, block, 1);
    if (seen.num_wqe_sent != per_qp || seen.num_wqe_completed != per_qp) {
      out.valid = false;
      out.failure = "telemetry of QP " + std::to_string(seen.qp_number) + ": " +
                    std::to_string(seen.num_wqe_sent) + " sent, " +
                    std::to_string(seen.num_wqe_completed) + " completed, " +
                    std::to_string(per_qp) + " posted";
    }
  }
  return out;
}

}  // namespace

bool queue_holds_run(const RateConfig& c) {
  return !peer_path(c) && run_wqebbs_per_qp(c, messages_per_thread(c, c.messages_per_thread)) <= c.sq_wqebbs;
}

RateConfig with_queue_holding_run(RateConfig c) {
  refuse(peer_path(c), "--deep-queue: mini-gda's rows only (--path " + c.path + ")");
  // A thread driving k QPs in turn puts 1/k of its messages on each.
  const uint64_t threads_per_qp = std::max<uint32_t>(c.threads / c.qps, 1);
  const uint64_t qps_per_thread = std::max<uint32_t>(c.qps / c.threads, 1);
  const uint32_t fits = static_cast<uint32_t>(uint64_t{MAX_SQ_WQEBBS} * qps_per_thread /
                                              (threads_per_qp * wqebbs_per_message(c)));
  const uint32_t wanted = c.messages_per_thread ? std::min(c.messages_per_thread, fits) : fits;
  c.messages_per_thread = messages_per_thread(c, wanted);
  refuse(run_wqebbs_per_qp(c, c.messages_per_thread) > MAX_SQ_WQEBBS,
         "--deep-queue: one post of each of a QP's " + std::to_string(threads_per_qp) +
             " threads takes more than " + std::to_string(MAX_SQ_WQEBBS) + " WQEBBs");
  uint32_t depth = 1;
  while (depth < run_wqebbs_per_qp(c, c.messages_per_thread)) depth *= 2;
  // At least two reclamation periods, as every depth (check_rate_config).
  while (depth < 2 * signal_period(c) * wqebbs_per_message(c) && depth < MAX_SQ_WQEBBS) depth *= 2;
  c.sq_wqebbs = depth;
  return c;
}

RateConfig peer_rate_config(const RateConfig& base) {
  RateConfig c = base;
  peer_library(c.path);  // refused by name, with the missing headers
  if (c.path == "gdaki") {
    c.threads = 8, c.qps = 1, c.ctas = 1, c.batch = 1, c.sharing = GDAKI_SHARING;
  } else {
    c.threads = 16 * 256, c.qps = 16, c.ctas = 16, c.batch = 32, c.sharing = NVSHMEM_SHARING;
  }
  c.payload = "value", c.payload_bytes = 8;
  return c;
}

void check_rate_config(const RateConfig& c) {
  if (peer_path(c)) {
    peer_library(c.path);
    refuse(c.payload != "value" || c.payload_bytes != 8 || c.doorbell != "direct" || c.telemetry_hooks,
           "--path " + c.path + ": 8 B inline puts from a register, direct doorbells, no telemetry");
    refuse(c.path == "gdaki" && RATE_SLOTS % (c.threads / c.qps) != 0,
           "--path gdaki: the QP's threads divide " + std::to_string(RATE_SLOTS));
    refuse(c.path == "nvshmem-ibgda" && c.sq_wqebbs > NVSHMEM_MAX_DEPTH,
           "--path nvshmem-ibgda: --sq-depth at most " + std::to_string(NVSHMEM_MAX_DEPTH) +
               " (NVSHMEM's 16-bit WQE counter)");
    refuse(c.path == "gdaki" && 2 * uint64_t{signal_period(c)} * c.threads > c.sq_wqebbs,
           "--path gdaki: --sq-depth " + std::to_string(c.sq_wqebbs) +
               " is below two wait periods of every thread (" +
               std::to_string(2 * signal_period(c) * c.threads) + " WQEs)");
    refuse(c.path == "nvshmem-ibgda" && c.sq_wqebbs < 2 * c.threads / c.qps,
           "--path nvshmem-ibgda: --sq-depth below two rounds of the QP's warps");
    return;
  }
  const RateSharing k = sharing_of(c.sharing);
  const RatePayload p = payload_of(c.payload);
  nic::doorbell_path_from_string(c.doorbell);  // refused by name
  refuse(c.threads == 0 || c.qps == 0 || c.ctas == 0 || c.batch == 0,
         "--threads, --qps, --ctas and --batch are at least 1");
  refuse(c.threads % c.ctas != 0, "--threads " + std::to_string(c.threads) +
                                      " is not a multiple of --ctas " + std::to_string(c.ctas));
  refuse(c.threads / c.ctas > 1024, "--threads / --ctas = " + std::to_string(c.threads / c.ctas) +
                                        " threads per CTA (at most 1024)");
  if (c.qps > c.threads) {
    refuse(k != RateSharing::exclusive || c.qps % c.threads != 0 ||
               c.qps / c.threads > MAX_QPS_PER_THREAD,
           "--qps " + std::to_string(c.qps) + " > --threads " + std::to_string(c.threads) +
               ": each thread drives --qps / --threads QPs alone (--sharing exclusive, a multiple, "
               "at most " + std::to_string(MAX_QPS_PER_THREAD) + " per thread)");
  } else {
    refuse(c.threads % c.qps != 0, "--threads " + std::to_string(c.threads) +
                                       " is not a multiple of --qps " + std::to_string(c.qps));
    refuse(c.qps % c.ctas != 0, "--qps " + std::to_string(c.qps) +
                                    " is not a multiple of --ctas " + std::to_string(c.ctas) +
                                    ": each QP's threads are in one CTA");
  }
  const uint32_t per_qp = c.threads / c.qps;
  refuse(k == RateSharing::exclusive && per_qp > 1,
         "--sharing exclusive: one thread per QP, not " + std::to_string(per_qp));
  refuse(k == RateSharing::cooperative && per_qp % 32 != 0,
         "--sharing cooperative: whole warps per QP, not " + std::to_string(per_qp) + " threads");
  refuse(k == RateSharing::cooperative && c.batch > 32 && c.batch % 32 != 0,
         "--sharing cooperative: --batch up to 32 or a multiple of 32, not " +
             std::to_string(c.batch));
  refuse(p == RatePayload::value && c.payload_bytes > 8,
         "--payload value: at most 8 B from a register, not " + std::to_string(c.payload_bytes));
  refuse(c.payload_bytes == 0, "--size 0");
  refuse(c.telemetry != 0 && !c.telemetry_hooks,
         "--telemetry N=" + std::to_string(c.telemetry) + ": a slot needs the hooks compiled in");
  refuse(c.telemetry != 0 && (c.telemetry & (c.telemetry - 1)) != 0,
         "--telemetry " + std::to_string(c.telemetry) + ": the sample interval N is a power of two");
  // Room must come back while a reclamation period is still being posted.
  refuse(2 * signal_period(c) * wqebbs_per_message(c) > c.sq_wqebbs,
         "--sq-depth " + std::to_string(c.sq_wqebbs) + " WQEBBs: below two reclamation periods (" +
             std::to_string(signal_period(c)) + " messages of " +
             std::to_string(wqebbs_per_message(c)) + " WQEBBs)");
  refuse(signal_period(c) % c.batch != 0, "--signal-period " + std::to_string(c.signal_period) +
                                              " is not a multiple of --batch " +
                                              std::to_string(c.batch));
}

Result measure_gpu_rate(const RateConfig& c, const std::string& experiment,
                        const std::string& label) {
  check_rate_config(c);
  Result r;
  r.experiment = experiment;
  r.label = label;
  r.engine = "gpu-kernel";
  r.placement = "gpu";
  r.submitter = "gpu-thread";
  r.pe_layout = "1 NIC, loopback QPs, 1 GPU";
  const uint32_t m = messages_per_thread(c, c.messages_per_thread);
  r.knobs = {{"path", c.path},
             {"threads", std::to_string(c.threads)},
             {"qps", std::to_string(c.qps)},
             {"ctas", std::to_string(c.ctas)},
             {"batch", std::to_string(c.batch)},
             {"sharing", c.sharing},
             {"payload", c.payload},
             {"payload_bytes", std::to_string(c.payload_bytes)},
             {"messages_per_thread", std::to_string(m)},
             {"signal_period",
              c.path == "gdaki" ? "every WQE (DOCA); a bounded wait every " +
                                      std::to_string(signal_period(c)) + " puts per thread"
              : c.path == "nvshmem-ibgda" ? std::string("the last WQE of each warp's 32")
                                          : std::to_string(signal_period(c))},
             {"sq_wqebbs", std::to_string(c.sq_wqebbs)},
             {"doorbell", c.doorbell},
             {"telemetry", c.telemetry ? "N=" + std::to_string(c.telemetry) + " (hooks compiled in)"
                           : c.telemetry_hooks ? std::string("disabled (hooks compiled in, no slot)")
                                               : std::string("off (hooks compiled out: gda::counted not used)")},
             {"ordering", peer_path(c) ? "the library's own fences"
                          : nic::doorbell_path_from_string(c.doorbell) == nic::DoorbellPath::cpu_assisted
                              ? CpuAssistedPolicy::key
                              : DirectPolicy::key},
             {"engine_warps", std::to_string(c.engine_ctas) + " CTAs x " +
                                  std::to_string(c.engine_warps_per_cta) + " warps"},
             {"nic_profile", softnic::profile_name(softnic::timing_profile(c.nic_profile))}};
  if (peer_path(c)) {
    const PeerLibrary lib = peer_library(c.path);
    r.knobs.push_back({"library", lib.library});
    r.knobs.push_back({"library_version", lib.version});
    r.knobs.push_back({"library_calls",
                       c.path == "gdaki"
                           ? "doca_gpu_dev_verbs_p<uint64_t> (sharing GPU, GPU_SM_DB); gdaki::wait "
                             "(poll_one_cq_at, bounded) on the ticket one period back, then the last"
                           : "per warp: ibgda_reserve_wqe_slots(32) by lane 0, "
                             "ibgda_write_rdma_write_inl_wqe per lane (last lane signalled), "
                             "ibgda_submit_requests by the last lane; drain: ibgda_poll_cq to "
                             "ready_head (ibgda_quiet); collapsed send CQs"});
  }
  Metric rate{"message rate", "Mmsg/s", {}}, per_qp{"per-QP rate", "Mmsg/s", {}};
  Metric backlog{"deepest backlog", "WQEBBs", {}};
  Metric posting{"posting rate", "Mmsg/s", {}};  // mini-gda's rows: the submitters' own pace
  uint64_t deepest = 0;
  bool valid = true;
  std::string note;
  for (uint32_t run = 0; run < c.runs; ++run) {
    const RunOutcome o = run_once(c);
    if (!o.failure.empty()) {
      valid = false;
      note += "run " + std::to_string(run) + ": " + o.failure + "; ";
      continue;
    }
    valid = valid && o.valid;
    rate.runs.push_back(summarize({o.mmsg_per_s}));
    per_qp.runs.push_back(summarize({o.mmsg_per_s / c.qps}));
    backlog.runs.push_back(summarize({double(o.deepest_backlog)}));
    if (o.posting_mmsg_per_s > 0) posting.runs.push_back(summarize({o.posting_mmsg_per_s}));
    deepest = std::max(deepest, o.deepest_backlog);
  }
  const double ceiling = model_ceiling(c);
  Metric model{"model ceiling", "Mmsg/s", {summarize({ceiling})}};
  r.metrics = {rate, per_qp, model, backlog};
  if (!posting.runs.empty()) r.metrics.push_back(posting);
  const bool held = queue_holds_run(c);
  if (!rate.runs.empty()) {
    r.knobs.push_back({"bottleneck", held ? held_run_bottleneck(rate.p50(), ceiling, deepest, run_wqebbs_per_qp(c, m))
                                          : rate_bottleneck(rate.p50(), ceiling, RateBacklog{deepest, outstanding_limit(c)})});
  }
  if (!posting.runs.empty()) {
    r.knobs.push_back({"posting_rate", held ? "the submitters' own pace: each QP's send queue held the run, so none "
                                              "waited for room (the message rate includes reclaiming every CQE after the last post)"
                                            : "to the last post, waits for room included: the run is deeper than the send queue"});
  }
  if (c.doorbell != "direct") {
    r.knobs.push_back({"ceiling_note",
                       "the model's ceiling is measured with direct doorbells; this path adds the "
                       "forwarder thread and the engine's system-scope reads of host memory"});
  }
  if (!note.empty()) r.knobs.push_back({"note", note});
  r.payload_validated = valid && !rate.runs.empty();
  return r;
}

void read_engine_flags(const Arguments& a, RateConfig& c) {
  c.device = static_cast<int>(a.integer("device", 0, 0, 64, flag_help::DEVICE));
  c.engine_ctas = static_cast<uint32_t>(a.integer("engine-ctas", c.engine_ctas, 1, 1024, flag_help::ENGINE_CTAS));
  c.engine_warps_per_cta = static_cast<uint32_t>(
      a.integer("engine-warps", c.engine_warps_per_cta, 1, softnic::MAX_ENGINE_WARPS_PER_CTA,
                flag_help::ENGINE_WARPS));
  c.nic_profile = a.text("nic-profile", "fast", flag_help::NIC_PROFILE);
  softnic::timing_profile(c.nic_profile);  // refused here, by name, before anything runs
}

int measure_gpu_rates(const std::vector<std::pair<std::string, RateConfig>>& points,
                      const std::string& experiment, Report& report) {
  for (const auto& point : points) check_rate_config(point.second);
  if (skip_without_cuda_device()) return 0;
  int status = 0;
  Progress progress(experiment, points.size());
  for (const auto& [label, config] : points) {
    Result r = measure_gpu_rate(config, experiment, label);
    if (!r.payload_validated) status = 1;
    report.add(std::move(r));
    progress.done(label);
  }
  return status;
}

}  // namespace dissect::bench::gpu
