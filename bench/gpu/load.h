// gpu-load (Figure 6, Table 11 with GPU producers): one run of one point on either path. The
// subcommand (load.cu) sweeps the points and assembles the rows; each path's run is in its own
// file (load_gda.cu: mini-gda on the softnic GPU engine; load_proxy.cu: mini-proxy rings served by
// host workers on the softnic host engine).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dissect/bench/gpu_load_plan.h"
#include "dissect/bench/proxy_cuda_rig.h"

namespace dissect::bench::gpu {

struct LoadConfig {
  std::string path = "mini-gda";   // mini-gda | mini-proxy
  uint32_t background_queues = 0;  // per endpoint: mini-gda QPs (0: one per CTA); mini-proxy rings
  uint32_t batch = 32;             // mini-gda: WQEs per cooperative post
  uint32_t workers = 4;            // mini-proxy T (rings r served by worker r % T)
  uint32_t proxy_batch = 16;       // mini-proxy B
  uint32_t ring_entries = 1024;
  // mini-proxy: WQEBBs of each worker's send queue. Where the NIC model drains a worker's QP more
  // slowly than the producers fill the rings, the backlog sits in whichever queue is deeper: a deep
  // send queue holds it where a private ring cannot pass it, a shallow one leaves it in the rings.
  uint32_t worker_sq_wqebbs = proxy::cuda::WORKER_SQ_WQEBBS;
  double pace_mmsgs = 0;           // background target, both endpoints together; 0: unpaced
  uint64_t ramp_ns = 20'000'000;   // background alone before the first ping
  uint64_t budget_ns = 500'000'000;  // the probe's time per point and run
  uint32_t warmup = 100, iterations = 2000;
  uint32_t sq_wqebbs = 4096;
  int device = 0;
  uint32_t engine_ctas = 8, engine_warps_per_cta = 8;
  std::string nic_profile = "fast";
};

struct LoadRun {
  std::vector<double> round_trip_us;  // one per recorded round trip
  double background_mmsgs = 0;        // carried while the probe ran
  double window_ms = 0;
  double sm_clock_mhz = 0;
  bool valid = false;
  std::string failure;                // why the run failed or did not validate; empty when fine
  std::string placement;              // mini-proxy: where the workers ran
  // mini-proxy, over the whole run (ramp included): the chain length the workers achieved (B
  // is its cap) and the share of their polling passes that found work: near 100 % the workers
  // are the bound; far below it they wait for producers or for the model's completions.
  double descriptors_per_post = 0;
  double worker_busy_percent = 0;
  double worker_full_percent = 0;  // passes that ended with the send queue full
  // mini-gda: the NIC model's deepest backlog on any QP over the run (ramp included), WQEBBs
  // (LoopbackQps::deepest_backlog): it reaches the send queue when the model holds the CTAs back.
  uint64_t deepest_backlog = 0;
};

// The layout of one point: background queues per endpoint and the probe's queue.
QueueLayout load_layout(const LoadConfig& config, uint32_t background, bool reserved);

LoadRun run_gda_load(const LoadConfig& config, const QueueLayout& layout);
LoadRun run_proxy_load(const LoadConfig& config, const QueueLayout& layout);

}  // namespace dissect::bench::gpu
