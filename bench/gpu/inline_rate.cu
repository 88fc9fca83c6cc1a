// `dissect gpu-inline-rate`: Figure 3b, inline against pointer payloads by size, at 16 QPs (one
// thread and one CTA each) with 16 WQEs per doorbell: the batched message rate falls as inlining
// moves the payload into the WQE (more stores per message, more WQEBBs per WQE), where a pointer
// WQE stays one WQEBB and the NIC reads the payload. Each point carries the model's ceiling.
#include <cstdio>
#include <string>
#include <vector>

#include "dissect/bench/experiment.h"
#include "dissect/bench/flag_help.h"
#include "dissect/softnic/gpu_engine.h"
#include "rate_run.h"

namespace dissect::bench {
namespace {

int run_gpu_inline_rate(const Arguments& a, Report& report) {
  a.provider({"softnic"});
  gpu::RateConfig c;
  const bool quick = a.flag("quick", "sizes 8, 64 and 220 B and one run");
  c.qps = static_cast<uint32_t>(a.integer("qps", 16, 1, 528, "QPs, one GPU thread and one CTA each"));
  c.threads = c.qps;
  c.ctas = c.qps;
  c.batch = static_cast<uint32_t>(a.integer("batch", 16, 1, 256, "WQEs per doorbell (Figure 3b: 16)"));
  const std::vector<uint64_t> sizes =
      a.sizes(quick ? std::vector<uint64_t>{8, 64, 220} : std::vector<uint64_t>{8, 16, 32, 64, 96, 128, 160, 192, 220},
              1, 220, "payload of each write");
  const std::vector<std::string> kinds = a.choices("payloads", "inline,pointer", {"inline", "pointer"},
                                                             "inline: copied into the WQE; pointer: read by the NIC from the source");
  c.runs = static_cast<uint32_t>(a.integer("runs", quick ? 1 : 3, 1, 100, flag_help::RUNS));
  gpu::read_engine_flags(a, c);
  a.check_all_used();
  std::vector<std::pair<std::string, gpu::RateConfig>> points;
  for (const std::string& kind : kinds) {
    for (uint64_t size : sizes) {
      gpu::RateConfig p = c;
      p.payload = kind;
      p.payload_bytes = static_cast<uint32_t>(size);
      points.emplace_back(kind + " " + std::to_string(size) + " B", p);
    }
  }
  return gpu::measure_gpu_rates(points, "gpu-inline-rate", report);
}

const bool registered = register_experiment(
    {"gpu-inline-rate",
     "Figure 3b: inline vs pointer message rate by payload size, 16 QPs, 16 WQEs per doorbell",
     run_gpu_inline_rate, true});

}  // namespace
}  // namespace dissect::bench
