// `dissect gpu-goodput`: Figure 8 with GPU producers. Pipelined writes of S bytes (8 B - 32 KiB
// by doubling, plus 7,168 B, DeepSeek-V3's FP8 token; --sizes or -b -e -f) for both paths:
//
//   mini-gda    --ctas CTAs, one warp and one QP each, posting 32 pointer writes per cooperative
//               post with many outstanding (gpu-rate's loop, rate_run.h) on the softnic GPU engine
//   mini-proxy  T GPU producers, one per ring, into T host workers chaining B requests per post on
//               the softnic host engine (goodput_proxy.cu)
//
// The reference is the profile's link rate (TimingProfile::goodput_gbps: 24.8 GB/s for cx7-ib);
// `fast` has no link, so there the reference is the GPU engine's own payload rate at the largest
// size (nic-ceiling), and the rows say so. Every row carries the reference and, per path, the
// first size whose goodput (median over runs) reaches 90 % of it (`first_size_at_90pct`, Figure
// 8's star); the row of that size says `at_90pct_star: yes`.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "dissect/bench/experiment.h"
#include "dissect/bench/flag_help.h"
#include "dissect/bench/gpu_load_plan.h"
#include "dissect/bench/progress.h"
#include "dissect/common/error.h"
#include "dissect/softnic/gpu_engine.h"
#include "gpu_command.h"
#include "goodput.h"
#include "nic_ceiling.h"
#include "rate_run.h"

namespace dissect::bench {
namespace {

struct GoodputConfig {
  std::vector<uint64_t> sizes;
  uint32_t ctas = 64;  // 16 left the GPU engine the bound at 512 B (35 Mmsg/s on 16 QPs, 141 on 64; H200)
  uint32_t runs = 3;
  gpu::RateConfig gda;           // engine, profile, device, queue depth
  gpu::ProxyGoodputConfig proxy;
};

std::string size_text(uint64_t size) {
  if (size >= 1024 && size % 1024 == 0) return std::to_string(size / 1024) + " KiB";
  return std::to_string(size) + " B";
}

std::string gbps_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", v);
  return text;
}

struct Reference {
  double gbps = 0;
  std::string what;
};

Reference reference_of(const GoodputConfig& c) {
  const softnic::TimingProfile profile = softnic::timing_profile(c.gda.nic_profile);
  if (profile.enabled && profile.goodput_gbps > 0) {
    return {profile.goodput_gbps, std::string("the ") + softnic::profile_name(profile) + " profile's link rate"};
  }
  NicCeilingConfig n;
  n.device = c.gda.device;
  n.engine_ctas = c.gda.engine_ctas;
  n.engine_warps_per_cta = c.gda.engine_warps_per_cta;
  n.nic_profile = c.gda.nic_profile;
  n.rounds = 4;
  n.runs = 1;
  const uint64_t largest = c.sizes.back();
  const Result r = measure_nic_ceiling_rate(n, c.ctas, static_cast<uint32_t>(largest));
  return {r.metrics.at(1).p50(), "the softnic GPU engine's own payload rate at " + size_text(largest) + " on " +
                                     std::to_string(c.ctas) + " QPs (nic-ceiling; the fast profile has no link)"};
}

// gpu-rate names the NIC model when its backlog filled the send queue (rate_bound.h). Where the
// model's ceiling is the profile's own pipe at this size (its message-rate cap or its link, whichever is
// lower), reaching it is Figure 8's saturation of the emulated NIC, not the software model's
// limit: the row says so.
void restate_profile_bound(const GoodputConfig& c, uint64_t size, Result& row) {
  const softnic::TimingProfile profile = softnic::timing_profile(c.gda.nic_profile);
  const auto ceiling = std::find_if(row.metrics.begin(), row.metrics.end(),
                                    [](const Metric& m) { return m.name == "model ceiling"; });
  const auto note = std::find_if(row.knobs.begin(), row.knobs.end(),
                                 [](const auto& k) { return k.first == "bottleneck"; });
  if (!profile.enabled || ceiling == row.metrics.end() || note == row.knobs.end()) return;
  const double pipe = 1e3 / softnic::pipe_ns(profile, 1, static_cast<double>(size));  // Mmsg/s
  if (note->second.rfind("NIC model", 0) == 0 && ceiling->p50() >= 0.9 * pipe) {
    note->second = std::string("the ") + softnic::profile_name(profile) + " profile's pipe (" +
                   gbps_text(profile.message_rate_mps) + " Mmsg/s, " + gbps_text(profile.goodput_gbps) +
                   " GB/s: the emulated NIC's)";
  }
}

// One mini-gda row: gpu-rate's pointer-write loop at `size`, its message rate turned into goodput.
Result gda_row(const GoodputConfig& c, uint64_t size) {
  gpu::RateConfig r = c.gda;
  r.threads = 32 * c.ctas, r.qps = c.ctas, r.ctas = c.ctas, r.batch = 32;
  r.sharing = "cooperative", r.payload = "pointer", r.payload_bytes = static_cast<uint32_t>(size);
  r.messages_per_thread = static_cast<uint32_t>(
      messages_per_producer(c.proxy.bytes, c.proxy.max_messages, size, r.threads, 8));
  r.runs = c.runs;
  Result row = gpu::measure_gpu_rate(r, "gpu-goodput", "mini-gda " + size_text(size));
  Metric goodput{"goodput", "GB/s", {}};
  for (const Summary& s : row.metrics.at(0).runs) goodput.runs.push_back(summarize({s.p50 * size / 1e3}));
  row.metrics.insert(row.metrics.begin(), goodput);
  row.knobs.insert(row.knobs.begin() + 1, {"payload bytes", std::to_string(size)});  // after gpu-rate's "path"
  restate_profile_bound(c, size, row);
  return row;
}

Result proxy_row(const GoodputConfig& c, uint64_t size) {
  Result row;
  row.experiment = "gpu-goodput";
  row.label = "mini-proxy " + size_text(size);
  row.engine = "host-thread";
  row.placement = "host";
  row.submitter = "gpu-thread (mini-proxy producer), host workers";
  row.pe_layout = "1 GPU, host workers, 1 softnic, loopback QP per worker";
  Metric goodput{"goodput", "GB/s", {}};
  bool valid = true;
  std::string note, placement;
  uint64_t messages = 0;
  for (uint32_t run = 0; run < c.runs; ++run) {
    const gpu::ProxyGoodputRun o = gpu::run_proxy_goodput(c.proxy, size, run);
    valid = valid && o.valid;
    if (!o.failure.empty()) note += "run " + std::to_string(run) + ": " + o.failure + "; ";
    if (o.gbps > 0) goodput.runs.push_back(summarize({o.gbps}));
    messages = o.messages, placement = o.placement;
  }
  row.metrics = {goodput};
  row.knobs = {{"path", "mini-proxy"},
               {"payload bytes", std::to_string(size)},
               {"workers (T)", std::to_string(c.proxy.workers)},
               {"rings (R)", std::to_string(c.proxy.workers)},
               {"producers", std::to_string(c.proxy.workers) + " GPU threads, one per ring (OwnedRing)"},
               {"batch (B)", std::to_string(c.proxy.batch)},
               {"handoff", "tuned"},
               {"ring_entries", std::to_string(c.proxy.ring_entries)},
               {"messages", std::to_string(messages)},
               {"payload memory", "mapped host memory (the host engine's reach)"},
               {"nic_profile", softnic::profile_name(softnic::timing_profile(c.proxy.nic_profile))}};
  if (!note.empty()) row.knobs.push_back({"note", note});
  row.environment = {{"worker pinning", placement}};
  row.payload_validated = valid && !goodput.runs.empty();
  return row;
}

// Figure 8's star on every row of one path: the reference and the first size reaching 90 % of it.
void mark_first_at_90(std::vector<Result>& rows, const std::vector<uint64_t>& sizes, const Reference& ref) {
  std::vector<double> medians;
  for (const Result& r : rows) medians.push_back(r.metrics.at(0).runs.empty() ? 0 : r.metrics.at(0).p50());
  const int first = first_size_reaching(medians, ref.gbps, 0.9);
  const std::string first_text = first < 0 ? "not reached" : size_text(sizes[first]);
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].knobs.push_back({"reference", ref.what});
    rows[i].knobs.push_back({"reference GB/s", gbps_text(ref.gbps)});
    rows[i].knobs.push_back({"first_size_at_90pct", first_text});
    rows[i].knobs.push_back({"at_90pct_star", static_cast<int>(i) == first ? "yes" : "no"});
  }
  std::fprintf(stderr, "gpu-goodput: %s first reaches 90 %% of %s GB/s (%s) at %s\n",
               rows.empty() ? "-" : rows[0].knobs[0].second.c_str(), gbps_text(ref.gbps).c_str(),
               ref.what.c_str(), first_text.c_str());
}

// Each path reads only its own flags, so a flag of a path not run is refused as unknown.
GoodputConfig read_config(const Arguments& a, const std::vector<std::string>& paths) {
  const bool quick = a.flag("quick", "sizes 8, 512, 7168 and 32768 B, fewer bytes a point, one run");
  const bool gda = std::count(paths.begin(), paths.end(), "mini-gda") > 0;
  const bool proxy = std::count(paths.begin(), paths.end(), "mini-proxy") > 0;
  GoodputConfig c;
  c.sizes = a.sizes(quick ? std::vector<uint64_t>{8, 512, 7168, 32768} : figure8_sizes(), 8, 1u << 20,
                    "payload of one pipelined write");
  c.runs = static_cast<uint32_t>(a.integer("runs", quick ? 1 : 3, 1, 100, flag_help::RUNS));
  c.proxy.bytes = a.integer("bytes", quick ? 32ull << 20 : 256ull << 20, 1, 1ull << 40, "mini-proxy payload bytes moved per point");
  c.proxy.max_messages = a.integer("max-messages", quick ? 1u << 18 : 1u << 21, 64, 1ull << 32, "mini-proxy messages per point at most");
  c.gda.device = c.proxy.device = static_cast<int>(a.integer("device", 0, 0, 64, flag_help::DEVICE));
  c.gda.nic_profile = c.proxy.nic_profile = a.text("nic-profile", "fast", flag_help::NIC_PROFILE);
  softnic::timing_profile(c.gda.nic_profile);  // refused here, by name, before anything runs
  if (gda) {
    c.ctas = static_cast<uint32_t>(a.integer("ctas", 64, 1, 128, "mini-gda producer CTAs (one QP each)"));
    c.gda.sq_wqebbs = static_cast<uint32_t>(a.power_of_two("sq-depth", 4096, 32768, "send queue WQEBBs of every QP"));
    c.gda.engine_ctas = static_cast<uint32_t>(a.integer("engine-ctas", c.gda.engine_ctas, 1, 1024, flag_help::ENGINE_CTAS));
    c.gda.engine_warps_per_cta = static_cast<uint32_t>(
        a.integer("engine-warps", c.gda.engine_warps_per_cta, 1, softnic::MAX_ENGINE_WARPS_PER_CTA, flag_help::ENGINE_WARPS));
  }
  if (proxy) {
    c.proxy.workers = static_cast<uint32_t>(a.integer("workers", 4, 1, 64, "mini-proxy worker threads (T)"));
    c.proxy.batch = static_cast<uint32_t>(a.integer("proxy-batch", 16, 1, 64, "mini-proxy descriptors a worker chains per doorbell (B)"));
    c.proxy.ring_entries = static_cast<uint32_t>(a.power_of_two("ring-entries", 1024, 1u << 20, flag_help::RING_ENTRIES));
  }
  return c;
}

int run_gpu_goodput(const Arguments& a, Report& report) {
  a.provider({"softnic"});
  const std::vector<std::string> paths = a.choices("path", "mini-gda,mini-proxy", {"mini-gda", "mini-proxy"}, "the transports: mini-gda and/or mini-proxy");
  const GoodputConfig c = read_config(a, paths);
  a.check_all_used();
  if (skip_without_cuda_device()) return 0;
  const Reference ref = reference_of(c);
  Progress progress("gpu-goodput", paths.size() * c.sizes.size());
  int status = 0;
  for (const std::string& path : paths) {
    std::vector<Result> rows;
    for (const uint64_t size : c.sizes) {
      rows.push_back(path == "mini-gda" ? gda_row(c, size) : proxy_row(c, size));
      if (!rows.back().payload_validated) status = 1;
      progress.done(rows.back().label);
    }
    mark_first_at_90(rows, c.sizes, ref);
    for (Result& r : rows) report.add(std::move(r));
  }
  return status;
}

const bool registered = register_experiment(
    {"gpu-goodput",
     "Figure 8, GPU producers: pipelined goodput vs payload (8 B - 32 KiB, 7,168 B), mini-gda and mini-proxy, "
     "first size at 90 % of the profile's link rate",
     run_gpu_goodput, true, "--nic-profile cx7-ib"});  // the report judges Figure 8 against a link

}  // namespace
}  // namespace dissect::bench
