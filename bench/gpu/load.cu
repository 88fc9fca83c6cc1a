// `dissect gpu-load`: Figure 6 and Table 11 with GPU producers. The round trip of an 8 B
// request-reply probe (p50, p99, perftest columns) while 0, 1, 4, 16, 64 background CTAs per
// endpoint load both endpoints with 8 B writes, with the background rate carried while the probe
// ran beside each point, on either path:
//
//   mini-gda    background CTAs (a warp each, `--batch` writes per cooperative post) on one QP per
//               CTA or a pool (`--qps-per-endpoint`); the probe on its endpoint's first background
//               QP (shared, as Table 11's shared GDAKI probe uses one background CTA's context) or
//               on a QP of its own (reserved). Softnic GPU engine; load_gda.cu.
//   mini-proxy  background CTAs (one producer thread each) on `--rings-per-endpoint` rings; the
//               probe on its endpoint's first background ring (shared) or a private ring, served
//               by the same T workers with the same batch B. Host workers, softnic host engine;
//               load_proxy.cu.
//
// `--pace-mops X` throttles the background to X M msg/s (both endpoints together) with
// %globaltimer, so that reserved queues of both paths can be compared at one load (Table 11's
// paced rows). Every row carries the NIC model's ceiling where one is measured and whether the
// model bounded the background; every number is the softnic model's, not a ConnectX's.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "dissect/bench/experiment.h"
#include "dissect/bench/flag_help.h"
#include "dissect/bench/progress.h"
#include "dissect/common/error.h"
#include "dissect/gda/ordering.h"
#include "dissect/softnic/gpu_engine.h"
#include "gpu_command.h"
#include "load.h"
#include "nic_ceiling.h"
#include "proxy_bound.h"
#include "rate_bound.h"
#include "../cpu/host_ceiling.h"

namespace dissect::bench {

QueueLayout gpu::load_layout(const LoadConfig& c, uint32_t background, bool reserved) {
  return make_layout(background, c.background_queues, reserved);
}

namespace {

using gpu::LoadConfig;
using gpu::LoadRun;

constexpr uint32_t MAX_BACKGROUND = 64;  // per endpoint: 2 * 64 + 2 one-warp CTAs stay resident

struct LoadPoint {
  std::string path;
  uint32_t background;
  bool reserved;
};


using gpu::one_decimal;

std::string point_label(const LoadPoint& p, const LoadConfig& c) {
  std::string label = p.path + ", " + std::to_string(p.background) + " background CTAs/endpoint, probe " +
                      (p.reserved ? "reserved" : "shared");
  if (c.pace_mmsgs > 0) label += ", paced " + one_decimal(c.pace_mmsgs) + " Mmsg/s";
  return label;
}

void add_path_knobs(const LoadConfig& c, const QueueLayout& l, Result& r) {
  const bool gda = c.path == "mini-gda";
  r.knobs.push_back({gda ? "background QPs per endpoint" : "background rings per endpoint",
                     std::to_string(l.per_endpoint)});
  r.knobs.push_back({gda ? "qps" : "rings (R)", std::to_string(l.queues())});
  if (gda) {
    r.knobs.push_back({"batch (WQEs per cooperative post)", std::to_string(c.batch)});
    r.knobs.push_back({"ordering", gda::ordering::gpu_fence::key});
    r.knobs.push_back({"sq_wqebbs", std::to_string(c.sq_wqebbs)});
    r.knobs.push_back({"engine_warps", std::to_string(c.engine_ctas) + " CTAs x " +
                                           std::to_string(c.engine_warps_per_cta) + " warps"});
  } else {
    r.knobs.push_back({"workers (T)", std::to_string(c.workers)});
    r.knobs.push_back({"batch (B)", std::to_string(c.proxy_batch)});
    r.knobs.push_back({"handoff", "tuned (background: shared rings; private probe: sole producer)"});
    r.knobs.push_back({"ring_entries", std::to_string(c.ring_entries)});
    r.knobs.push_back({"worker sq_wqebbs", std::to_string(c.worker_sq_wqebbs)});
  }
}

// Read by the report (scripts/dissect_report): a note naming the model marks a row the model
// bounded. Where the model's ceiling is the profile's own message-rate cap (the emulated NIC's,
// e.g. cx7-ib's 260 Mmsg/s), reaching it is the NIC being emulated, not the software model.
// The background CTAs post until their reservation waits for room, so the model's backlog fills
// the send queue when the model holds them back (rate_bound.h); a model that does because the
// profile caps its message rate at the emulated NIC's is that NIC's bound, not the engine's.
// The cap's wording names the emulated NIC, not the model: the report reads "model" as model-bound.
std::string gda_bottleneck(double carried, double ceiling, const gpu::RateBacklog& backlog,
                           const softnic::TimingProfile& profile) {
  if (gpu::submitters_waited(backlog) && profile.enabled && profile.message_rate_mps > 0 &&
      ceiling >= 0.9 * profile.message_rate_mps) {
    return std::string("the ") + softnic::profile_name(profile) + " profile's message-rate cap (" +
           one_decimal(profile.message_rate_mps) + " Mmsg/s, the emulated NIC's: the CTAs' queues filled to " +
           std::to_string(backlog.deepest) + " of " + std::to_string(backlog.limit) + " WQEBBs)";
  }
  return gpu::rate_bottleneck(carried, ceiling, backlog);
}

// What bounded the background: mini-gda's from the model's deepest backlog, mini-proxy's from the
// workers' chains and passes beside the host engine's ceiling.
void add_bottleneck(const LoadConfig& c, const LoadPoint& p, const QueueLayout& l, const Metric& carried,
                    const gpu::WorkerPasses& passes, uint64_t deepest, Result& r) {
  if (p.background == 0) return;  // no background to bound
  const softnic::TimingProfile profile = softnic::timing_profile(c.nic_profile);
  if (c.path == "mini-gda") {
    const double ceiling =
        nic_model_ceiling(c.device, c.engine_ctas, c.engine_warps_per_cta, c.nic_profile, 2 * l.per_endpoint, 8);
    r.metrics.push_back(Metric{"model ceiling", "Mmsg/s", {summarize({ceiling})}});
    r.knobs.push_back(
        {"bottleneck", gda_bottleneck(carried.p50(), ceiling, gpu::RateBacklog{deepest, c.sq_wqebbs}, profile)});
    return;
  }
  // The host engine's own rate with as many threads and QPs as the workers have (host-nic-ceiling).
  const double ceiling = host_engine_ceiling(c.workers, c.workers, c.nic_profile);
  r.metrics.push_back(Metric{"model ceiling", "Mmsg/s", {summarize({ceiling})}});
  if (profile.enabled && profile.message_rate_mps > 0) {
    r.metrics.push_back(Metric{"profile rate cap", "Mmsg/s", {summarize({profile.message_rate_mps})}});
  }
  const gpu::WorkerQueues queues{c.workers, c.worker_sq_wqebbs};
  if (const double in_flight = gpu::in_flight_bound_mmsgs(queues, profile); in_flight > 0) {
    r.metrics.push_back(Metric{"send queues' in-flight bound", "Mmsg/s", {summarize({in_flight})}});
  }
  r.knobs.push_back({"bottleneck", gpu::proxy_bottleneck(carried.p50(), ceiling, passes, profile, queues)});
  r.knobs.push_back({"ceiling_note", "model ceiling: the softnic host engine's rate on pre-built 8 B writes with "
                                     "one thread per worker QP (host-nic-ceiling); below 80 % of it the "
                                     "bottleneck is read from the workers' chains and busy passes, and "
                                     "with their send queues full from what those hold in flight over the "
                                     "profile's latency (send queues' in-flight bound)"});
}

Result base_row(const LoadConfig& c, const LoadPoint& p, const QueueLayout& l) {
  Result r;
  r.experiment = "gpu-load";
  r.label = point_label(p, c);
  const bool gda = c.path == "mini-gda";
  r.engine = gda ? "gpu-kernel" : "host-thread";
  r.placement = gda ? "gpu" : "host";
  r.submitter = gda ? "gpu-thread" : "gpu-thread (mini-proxy producer), host workers";
  r.pe_layout = gda ? "1 GPU, 1 softnic, 2 endpoints on loopback QPs"
                    : "1 GPU, host workers, 1 softnic, loopback QP per worker";
  r.knobs = {{"path", c.path},
             {"background CTAs per endpoint", std::to_string(p.background)},
             {"background CTAs total", std::to_string(2 * p.background)},
             {"probe queue", p.reserved ? "reserved" : "shared"},
             {"pace target Mmsg/s", c.pace_mmsgs > 0 ? one_decimal(c.pace_mmsgs) : "unpaced"},
             {"message bytes", "8"},
             {"probe budget ms", std::to_string(c.budget_ns / 1'000'000)},
             {"nic_profile", softnic::profile_name(softnic::timing_profile(c.nic_profile))}};
  add_path_knobs(c, l, r);
  return r;
}

Result measure_point(const LoadConfig& c, const LoadPoint& p, uint32_t runs) {
  const QueueLayout l = gpu::load_layout(c, p.background, p.reserved);
  Result r = base_row(c, p, l);
  Metric trip{"round trip", "us", {}}, trip99{"round trip p99", "us", {}}, carried{"background rate", "Mmsg/s", {}};
  Metric chain{"descriptors per post", "count", {}}, busy{"worker busy passes", "%", {}},
      full{"send queue full passes", "%", {}};
  Metric backlog{"deepest backlog", "WQEBBs", {}};
  uint64_t deepest = 0;
  bool valid = true;
  std::string note, placement;
  double clock = 0, window = 0;
  size_t samples = 0;
  for (uint32_t run = 0; run < runs; ++run) {
    const LoadRun o = c.path == "mini-gda" ? gpu::run_gda_load(c, l) : gpu::run_proxy_load(c, l);
    valid = valid && o.valid;
    if (!o.failure.empty()) note += "run " + std::to_string(run) + ": " + o.failure + "; ";
    if (o.round_trip_us.empty()) continue;
    const Summary s = summarize(o.round_trip_us);
    trip.runs.push_back(s);
    trip99.runs.push_back(summarize({s.p99}));
    carried.runs.push_back(summarize({o.background_mmsgs}));
    chain.runs.push_back(summarize({o.descriptors_per_post}));
    busy.runs.push_back(summarize({o.worker_busy_percent}));
    full.runs.push_back(summarize({o.worker_full_percent}));
    backlog.runs.push_back(summarize({double(o.deepest_backlog)}));
    deepest = std::max(deepest, o.deepest_backlog);
    clock = o.sm_clock_mhz, window = o.window_ms, placement = o.placement;
    samples += o.round_trip_us.size();
  }
  r.metrics = {trip, trip99, carried};
  if (c.path == "mini-proxy") r.metrics.insert(r.metrics.end(), {chain, busy, full});
  if (c.path == "mini-gda") r.metrics.push_back(backlog);
  const auto median = [](const Metric& m) { return m.runs.empty() ? 0.0 : m.p50(); };
  add_bottleneck(c, p, l, carried, {median(chain), median(busy), median(full)}, deepest, r);
  if (!note.empty()) r.knobs.push_back({"note", note});
  r.payload_validated = valid && !trip.runs.empty();
  r.environment = {{"sm_clock_mhz", one_decimal(clock)},
                   {"probe samples (all runs)", std::to_string(samples)},
                   {"probe window ms (last run)", one_decimal(window)},
                   {"round trip p99 metric", "each run's p99 as that run's value"},
                   {"background rate", c.path == "mini-gda"
                                           ? "background messages posted by the CTAs while the probe ran (at most "
                                             "one queue ahead of the NIC), over the probe's window"
                                           : "background requests completed on the background rings while the "
                                             "probe ran (the probe's own excluded), over the probe's window"},
                   {"timing", "pinger's clock64, converted with its effective SM clock"}};
  if (c.path == "mini-proxy") {
    r.environment.push_back({"descriptors per post, worker busy and send queue full passes",
                             "summed over the workers and the whole run (ramp included), not only the probe's window"});
  }
  if (!placement.empty()) r.environment.push_back({"worker pinning", placement});
  return r;
}

LoadConfig read_config(const Arguments& a, const std::string& path, bool quick) {
  LoadConfig c;
  c.path = path;
  c.device = static_cast<int>(a.integer("device", 0, 0, 64, flag_help::DEVICE));
  c.nic_profile = a.text("nic-profile", "fast", flag_help::NIC_PROFILE);
  softnic::timing_profile(c.nic_profile);  // refused here, by name, before anything runs
  c.pace_mmsgs = static_cast<double>(a.integer("pace-mops", 0, 0, 100'000, "paced mode (Table 11): hold the background to this many M msg/s; 0 = unpaced"));
  c.warmup = static_cast<uint32_t>(a.integer("warmup", quick ? 20 : 100, 0, 1'000'000, "probe round trips discarded before the timed ones"));
  c.iterations = static_cast<uint32_t>(a.integer("iterations", quick ? 300 : 2000, 1, 1'000'000, "timed probe round trips per point"));
  c.budget_ns = a.integer("probe-ms", quick ? 200 : 500, 1, 60'000, "longest time the probe may take per point, ms (the point ends at iterations or this)") * 1'000'000;
  c.ramp_ns = a.integer("ramp-ms", quick ? 10 : 20, 0, 10'000, "time the background runs before the probe starts, ms") * 1'000'000;
  return c;
}

// Each path reads only its own flags, so a flag of a path not run is refused as unknown.
void read_gda_flags(const Arguments& a, LoadConfig& c) {
  c.background_queues = static_cast<uint32_t>(a.integer("qps-per-endpoint", 0, 0, MAX_BACKGROUND, "mini-gda background QPs per endpoint (0: one per background CTA)"));
  c.batch = static_cast<uint32_t>(a.integer("batch", 32, 1, 32, "mini-gda WQEs per doorbell of a background warp (cooperative publication)"));
  c.sq_wqebbs = static_cast<uint32_t>(a.power_of_two("sq-depth", 4096, 32768, "send queue WQEBBs of every QP"));
  c.engine_ctas = static_cast<uint32_t>(a.integer("engine-ctas", c.engine_ctas, 1, 1024, flag_help::ENGINE_CTAS));
  c.engine_warps_per_cta =
      static_cast<uint32_t>(a.integer("engine-warps", c.engine_warps_per_cta, 1, softnic::MAX_ENGINE_WARPS_PER_CTA, flag_help::ENGINE_WARPS));
}

void read_proxy_flags(const Arguments& a, LoadConfig& c) {
  c.background_queues = static_cast<uint32_t>(a.integer("rings-per-endpoint", 16, 1, 256, "mini-proxy background rings per endpoint"));
  c.workers = static_cast<uint32_t>(a.integer("workers", 4, 1, 64, "mini-proxy worker threads (T)"));
  c.proxy_batch = static_cast<uint32_t>(a.integer("proxy-batch", 16, 1, 64, "mini-proxy descriptors a worker chains per doorbell (B)"));
  c.ring_entries = static_cast<uint32_t>(a.power_of_two("ring-entries", 1024, 1u << 20, flag_help::RING_ENTRIES));
  c.worker_sq_wqebbs = static_cast<uint32_t>(a.power_of_two(
      "worker-sq-depth", proxy::cuda::WORKER_SQ_WQEBBS, 32768,
      "mini-proxy: send queue WQEBBs of each worker's QP (where the model drains it slower than the "
      "producers fill the rings, the backlog sits in the deeper of the two)"));
  if (c.worker_sq_wqebbs < c.proxy_batch) {
    throw InvalidArgument("--worker-sq-depth " + std::to_string(c.worker_sq_wqebbs) + ": below --proxy-batch " +
                          std::to_string(c.proxy_batch) + ", a worker could never post a whole chain");
  }
  if (2 * c.background_queues < c.workers) {  // refused here rather than by the proxy mid-sweep
    throw InvalidArgument("--rings-per-endpoint " + std::to_string(c.background_queues) + ": the " +
                          std::to_string(2 * c.background_queues) + " background rings leave some of --workers " +
                          std::to_string(c.workers) + " without a ring");
  }
}

int run_gpu_load(const Arguments& a, Report& report) {
  a.provider({"softnic"});
  const bool quick = a.flag("quick", "background 0 and 16 CTAs, 300 round trips a point, one run");
  const std::vector<std::string> paths = a.choices("path", "mini-gda,mini-proxy", {"mini-gda", "mini-proxy"}, "the transports: mini-gda (GPU threads post WQEs) and/or mini-proxy (GPU threads post descriptors)");
  const LoadConfig common = read_config(a, paths.front(), quick);
  std::vector<LoadConfig> configs;
  for (const std::string& path : paths) {
    configs.push_back(common);
    configs.back().path = path;
    path == "mini-gda" ? read_gda_flags(a, configs.back()) : read_proxy_flags(a, configs.back());
  }
  std::vector<uint64_t> background = a.integers("background", quick ? std::vector<uint64_t>{0, 16}
                                                                    : std::vector<uint64_t>{0, 1, 4, 16, 64},
                                                0, MAX_BACKGROUND, "background CTAs loading both endpoints (Figure 6's x axis)");
  const std::vector<std::string> probes = a.choices("probe", "shared,reserved", {"shared", "reserved"}, "where the probe's requests go: shared (the background's first queue) or reserved (a queue of its own)");
  const uint32_t runs = static_cast<uint32_t>(a.integer("runs", quick ? 1 : 3, 1, 100, flag_help::RUNS));
  a.check_all_used();
  if (skip_without_cuda_device()) return 0;
  Progress progress("gpu-load", configs.size() * probes.size() * background.size());
  int status = 0;
  for (const LoadConfig& c : configs) {
    for (const std::string& probe : probes) {
      for (const uint64_t n : background) {
        const LoadPoint p{c.path, static_cast<uint32_t>(n), probe == "reserved"};
        Result r = measure_point(c, p, runs);
        if (!r.payload_validated) status = 1;
        progress.done(r.label);
        report.add(std::move(r));
      }
    }
  }
  return status;
}

const bool registered = register_experiment(
    {"gpu-load",
     "Figure 6 / Table 11, GPU producers: probe round trip under 0-64 background CTAs per endpoint, shared vs "
     "reserved queue, mini-gda and mini-proxy, background rate carried beside each point (--pace-mops: paced)",
     run_gpu_load, true});

}  // namespace
}  // namespace dissect::bench
