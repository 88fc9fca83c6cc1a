// `dissect gpu-rate`: Table 5, the 8 B message rate of GPU submitters through mini-gda. T threads
// in C CTAs post 8 B inline writes (from a register) on Q QPs, `--batch` WQEs per doorbell, many
// outstanding, with periodic reclamation and a final drain (rate_kernel.cuh); the QPs' threads
// share them as `--sharing` says. Every result carries the NIC model's ceiling for the same QPs
// measured in the same process, and says whether the submitter or the model bounded the rate.
// `--sweep` runs every mini-gda row of Table 5, each labelled with its row, and the one-QP rows
// that compare sharing strategies again with each send queue holding its run (HOLDING; with
// `--deep-queue` every row holds its run and they are not repeated). `--path gdaki` or
// `--path nvshmem-ibgda` runs that library's own device code in its best configuration of Table
// 5's note instead (peer_rate.h; with --sweep too), on the same QPs, with the same metrics.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "dissect/bench/experiment.h"
#include "dissect/bench/flag_help.h"
#include "dissect/common/error.h"
#include "dissect/softnic/gpu_engine.h"
#include "rate_run.h"
#include "telemetry_cost.h"

namespace dissect::bench {
namespace {

using gpu::RateConfig;

struct Table5Row {
  const char* label;  // null: row_label() of the configuration
  uint32_t threads, qps, ctas, batch;
  const char* sharing;
  const char* doorbell = "direct";
  // Each send queue holds the run (with_queue_holding_run): the submitters never wait for room, so
  // their posting rate is their own pace where the model cannot keep up with them.
  bool holds_run = false;
};

// The paper's rows (Table 5, P-IB), in its order; † is handoff at batch 1, ∗ handoff at 32.
const Table5Row TABLE5[] = {
    {"one thread, 1 QP, batch 1", 1, 1, 1, 1, "exclusive"},
    {"one thread, 2 QPs, batch 1", 1, 2, 1, 1, "exclusive"},
    {"one thread, 32 QPs, batch 1", 1, 32, 1, 1, "exclusive"},
    {"one thread, 1 QP, batch 16", 1, 1, 1, 16, "exclusive"},
    {"32 threads, 1 QP, doorbell lock per WQE (†)", 32, 1, 1, 1, "handoff"},
    {"256 threads, 1 QP, slots handed off per thread (∗)", 256, 1, 1, 32, "handoff"},
    {"32 threads, 1 QP, cooperative (‡)", 32, 1, 1, 32, "cooperative"},
    {"256 threads, 1 QP, cooperative (‡)", 256, 1, 1, 32, "cooperative"},
    // The rows of one QP that compare sharing strategies (§4.3.1) again, each send queue holding the
    // run: one cooperative warp outruns the NIC model on one QP (stop 44), so its message rate is the
    // model's, and the strategies are compared by what the submitters post.
    {"one thread, 1 QP, batch 1", 1, 1, 1, 1, "exclusive", "direct", true},
    {"256 threads, 1 QP, slots handed off per thread (∗)", 256, 1, 1, 32, "handoff", "direct", true},
    {"32 threads, 1 QP, cooperative (‡)", 32, 1, 1, 32, "cooperative", "direct", true},
    {"256 threads, 1 QP, cooperative (‡)", 256, 1, 1, 32, "cooperative", "direct", true},
    {"16 threads, 16 QPs, 16 SMs, batch 1", 16, 16, 16, 1, "exclusive"},
    {"16 threads, 16 QPs, 16 SMs, batch 16", 16, 16, 16, 16, "exclusive"},
    {"32 threads, 32 QPs, 1 SM, batch 16", 32, 32, 1, 16, "exclusive"},
    {"64 threads, 64 QPs, 1 SM, batch 16", 64, 64, 1, 16, "exclusive"},
    {"64 threads, 64 QPs, 64 SMs, batch 16", 64, 64, 64, 16, "exclusive"},
    // Table 13's mini-gda configuration beside NVSHMEM's (16 QPs x 256 threads, one QP per CTA).
    {"4096 threads, 16 QPs, 16 SMs, cooperative (‡)", 4096, 16, 16, 32, "cooperative"},
    // §4.3.1: a host thread ringing the doorbells of GPU-built WQEs, beside GPU submission on the
    // same 16 QPs (batch 64 so that the submitter's system-scope fence is amortized as well).
    {nullptr, 16, 16, 16, 64, "exclusive", "direct"},
    {nullptr, 16, 16, 16, 64, "exclusive", "cpu-assisted"},
};

// One entry of --telemetry: off is the bare submit path (a build without telemetry has the same
// SASS); disabled has the hooks compiled in (gda::counted) and no slot, so each hook is one
// untaken branch; N also attaches a counter block sampled 1 in N. Off against disabled is what
// a user pays for a build that can turn telemetry on.
struct TelemetryMode {
  bool hooks = false;
  uint32_t sample_interval = 0;  // 0: no slot
  bool counted() const { return hooks; }
  std::string label() const {
    if (!hooks) return "off";
    return sample_interval ? "N=" + std::to_string(sample_interval) : "disabled";
  }
};

std::vector<TelemetryMode> parse_telemetry_modes(const std::string& list) {
  std::vector<TelemetryMode> modes;
  size_t at = 0;
  while (at <= list.size()) {
    const size_t comma = std::min(list.find(',', at), list.size());
    const std::string word = list.substr(at, comma - at);
    at = comma + 1;
    if (word == "off" || word == "0") {
      modes.push_back({false, 0});
    } else if (word == "disabled") {
      modes.push_back({true, 0});
    } else {
      char* end = nullptr;
      const unsigned long n = word.empty() ? 0 : std::strtoul(word.c_str(), &end, 10);
      if (word.empty() || *end != '\0' || n == 0 || n > (1u << 20) || (n & (n - 1)) != 0) {
        throw InvalidArgument("--telemetry '" + word + "' in '" + list +
                              "': each entry is off, disabled or a power of two N in [1, 2^20]");
      }
      modes.push_back({true, static_cast<uint32_t>(n)});
    }
  }
  return modes;
}

std::string row_label(const RateConfig& c);

std::string row_label_of(const Table5Row& row, const RateConfig& c) {
  return (row.label ? row.label : row_label(c)) + (row.holds_run ? gpu::HOLDING : "");
}

std::string row_label(const RateConfig& c) {
  return std::to_string(c.threads) + " threads, " + std::to_string(c.qps) + " QPs, " +
         std::to_string(c.ctas) + " CTAs, batch " + std::to_string(c.batch) + ", " + c.sharing +
         (c.doorbell == "direct" ? "" : ", " + c.doorbell + " doorbell");
}

int run_gpu_rate(const Arguments& a, Report& report) {
  a.provider({"softnic"});
  RateConfig c;
  const bool sweep = a.flag("sweep", "every mini-gda row of Table 5 (threads, QPs, CTAs, batch, sharing) instead of one");
  const bool quick = a.flag("quick", "one run instead of 3");
  c.threads = static_cast<uint32_t>(a.integer("threads", 1, 1, 16384, "GPU threads posting (Table 5's T)"));
  c.qps = static_cast<uint32_t>(a.integer("qps", 1, 1, 528, "loopback QPs the threads drive (Table 5's Q)"));
  c.ctas = static_cast<uint32_t>(a.integer("ctas", 1, 1, 528, "CTAs the threads are spread over (a QP's threads share one)"));
  c.batch = static_cast<uint32_t>(a.integer("batch", 1, 1, 256, "WQEs per doorbell (Table 5's B)"));
  c.sharing = a.choice("sharing", "exclusive", {"exclusive", "shared", "handoff", "cooperative"},
                       "how a QP's threads share it (Table 5; rate_kernel.cuh)");
  c.payload_bytes = static_cast<uint32_t>(a.integer("size", 8, 1, 8, "payload of each write, bytes, from a register"));
  c.doorbell = a.choice("doorbell", "direct", {"direct", "cpu-assisted"},
                        "who rings: the GPU thread, or a host thread it hands the doorbell to");
  // Telemetry compiled out (off), compiled in with no slot (disabled), and sampled 1 in N, crossed
  // with every row in one run: --telemetry off,disabled,1,4,16,64.
  const std::vector<TelemetryMode> telemetry = parse_telemetry_modes(a.text(
      "telemetry", "off",
      "a comma list crossed with every row: off (hooks compiled out), disabled (hooks compiled in, "
      "no slot), or N (hooks compiled in, every QP sampled 1 in N)"));
  c.messages_per_thread = static_cast<uint32_t>(a.integer("messages", 0, 0, 100'000'000,
                                                              "writes per thread and run; 0: about 2^22 in all"));
  c.signal_period = static_cast<uint32_t>(a.integer("signal-period", 0, 0, 16384,
                                                             "WQEs per signalled WQE (periodic reclamation); 0: 64 rounded to the batch"));
  c.sq_wqebbs = static_cast<uint32_t>(a.power_of_two("sq-depth", c.sq_wqebbs, gpu::MAX_SQ_WQEBBS,
                                                        "send queue depth of each QP, WQEBBs (64 B each)"));
  const bool deep = a.flag("deep-queue",
                           "size each QP's send queue to hold its whole run (at most 32,768 WQEBBs, the "
                           "run's messages cut to fit): no submitter waits for room, so the posting rate "
                           "is the submitters' own pace beside the rate the NIC model carried (with --sweep: every row)");
  c.runs = static_cast<uint32_t>(a.integer("runs", quick ? 1 : 3, 1, 100, flag_help::RUNS));
  c.path = a.choice("path", "mini-gda", {"mini-gda", "gdaki", "nvshmem-ibgda"},
                    "whose device code posts: mini-gda, or a library's own kernel in its own configuration (Table 5's note)");
  gpu::read_engine_flags(a, c);
  a.check_all_used();
  if (deep && a.given("sq-depth")) {
    throw InvalidArgument("--deep-queue sizes each send queue to its run; --sq-depth " +
                          std::to_string(c.sq_wqebbs) + " would not apply");
  }
  if (c.path != "mini-gda") {
    // The library's own configuration of Table 5's note (--sweep too: it has one); mini-gda's
    // shape flags would silently not apply, so they are refused.
    const RateConfig mini;
    if (c.threads != mini.threads || c.qps != mini.qps || c.ctas != mini.ctas ||
        c.batch != mini.batch || c.sharing != mini.sharing || c.doorbell != mini.doorbell ||
        c.payload_bytes != mini.payload_bytes || telemetry.size() > 1 || telemetry[0].counted() || deep) {
      throw InvalidArgument("--path " + c.path + " runs the library's own configuration (GDAKI: "
                            "8 threads on 1 QP; NVSHMEM: 16 QPs x 256 threads); --threads, --qps, "
                            "--ctas, --batch, --sharing, --doorbell, --size, --telemetry and --deep-queue "
                            "are mini-gda's");
    }
    const RateConfig p = gpu::peer_rate_config(c);
    return gpu::measure_gpu_rates({{c.path + ", " + row_label(p), p}}, "gpu-rate", report);
  }
  std::vector<std::pair<std::string, RateConfig>> points;
  if (sweep) {
    for (const Table5Row& row : TABLE5) {
      if (row.holds_run && deep) continue;  // every row holds its run already
      RateConfig p = c;
      p.threads = row.threads, p.qps = row.qps, p.ctas = row.ctas, p.batch = row.batch;
      p.sharing = row.sharing;
      p.doorbell = row.doorbell;
      points.emplace_back(row_label_of(row, p), row.holds_run ? gpu::with_queue_holding_run(p) : p);
    }
  } else {
    points.emplace_back(row_label(c), c);
  }
  if (deep) {
    for (auto& point : points) point.second = gpu::with_queue_holding_run(point.second);
  }
  if (telemetry.size() > 1 || telemetry[0].counted()) {
    std::vector<std::pair<std::string, RateConfig>> crossed;
    for (const auto& [label, p] : points) {
      for (const TelemetryMode& mode : telemetry) {
        RateConfig t = p;
        t.telemetry = mode.sample_interval;
        t.telemetry_hooks = mode.counted();
        crossed.emplace_back(label + ", telemetry " + mode.label(), t);
      }
    }
    points = crossed;
  }
  const size_t first = report.results().size();
  const int status = gpu::measure_gpu_rates(points, "gpu-rate", report);
  if (telemetry.size() > 1) {
    std::vector<gpu::TelemetryRowMode> modes;
    for (const TelemetryMode& mode : telemetry) modes.push_back({mode.hooks, mode.sample_interval});
    gpu::annotate_telemetry_cost(report.results(), first, modes);
  }
  return status;
}

const bool registered = register_experiment(
    {"gpu-rate",
     "Table 5: 8 B message rate of GPU threads by threads, QPs, CTAs, batch and sharing, beside the "
     "model's ceiling (--sweep: every row; --path gdaki|nvshmem-ibgda: the library's own kernel)",
     run_gpu_rate, true, "--sweep"});

}  // namespace
}  // namespace dissect::bench
