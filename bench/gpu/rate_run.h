// Runs the posting loop of rate_kernel.cuh for one configuration, beside the NIC model's own
// ceiling for the same QPs and payload (nic-ceiling), and says which of the two bounded the rate.
// Host-side entry point of gpu-rate and gpu-inline-rate.
#pragma once

#include <cstdint>
#include <string>

#include <utility>
#include <vector>

#include "dissect/bench/experiment.h"
#include "dissect/bench/results.h"
#include "rate_bound.h"  // MAX_SQ_WQEBBS

namespace dissect::bench::gpu {

struct RateConfig {
  // mini-gda | gdaki | nvshmem-ibgda: whose device code posts (peer_rate.h). A library's path runs
  // its own configuration (peer_rate_config); only the message count, signal period, ring depth,
  // runs and engine flags below apply to it.
  std::string path = "mini-gda";
  uint32_t threads = 1, qps = 1, ctas = 1, batch = 1;
  std::string sharing = "exclusive";  // exclusive | shared | handoff | cooperative
  std::string payload = "value";      // value (<= 8 B, from a register) | inline | pointer
  uint32_t payload_bytes = 8;
  std::string doorbell = "direct";    // direct | cpu-assisted (a host thread rings: nic.h)
  uint32_t telemetry = 0;             // 0: no slot; N: every QP sampled 1 in N (needs the hooks)
  bool telemetry_hooks = false;       // the kernel with gda::counted: telemetry compiled in
  uint32_t messages_per_thread = 0;   // 0: about 2^22 messages in all
  uint32_t signal_period = 0;         // messages per signalled WQE; 0: 64 rounded to the batch
  uint32_t sq_wqebbs = 4096;
  uint32_t runs = 3;
  int device = 0;
  uint32_t engine_ctas = 8, engine_warps_per_cta = 8;
  std::string nic_profile = "fast";
};

// Table 5's note for `path`'s library, the rest of `base` kept: GDAKI 8 threads on 1 QP in 1
// CTA; NVSHMEM 16 QPs x 256 threads, one QP per CTA, batched by warp. Throws InvalidArgument
// naming the missing headers when this build has no adapter for the path.
RateConfig peer_rate_config(const RateConfig& base);

// Throws InvalidArgument naming the knob when the configuration cannot run as asked.
void check_rate_config(const RateConfig& c);

// Whether each QP's send queue holds the whole timed run of a mini-gda row, so that no submitter
// ever waits for room and the posting rate is the submitters' own pace.
bool queue_holds_run(const RateConfig& c);

// `c` with each QP's send queue sized to hold its timed run (--deep-queue): the run's messages cut
// to what MAX_SQ_WQEBBS holds (or kept, when fewer were asked for), the depth the next power of two
// above them and at least two reclamation periods. Throws InvalidArgument when one post of a QP's
// submitters does not fit, or for a library's path.
RateConfig with_queue_holding_run(RateConfig c);

// Metrics: message rate, per-QP rate, the model's ceiling (Mmsg/s), the deepest backlog the NIC
// model saw on a QP (WQEBBs) and, for mini-gda's rows, the posting rate: the messages over the
// span to the submitters' last post, the drain left out, i.e. their own pace wherever they never
// waited for room (a send queue deeper than the run's messages: --sq-depth, --messages). Knobs:
// every field above and "bottleneck": "NIC model" when the backlog reached half of what the
// submitters may leave outstanding, else "submitter" (rate_bound.h).
Result measure_gpu_rate(const RateConfig& config, const std::string& experiment,
                        const std::string& label);

// --device, --engine-ctas, --engine-warps, --nic-profile (refused by name if unknown).
void read_engine_flags(const Arguments& arguments, RateConfig& config);

// Checks every point before anything runs, skips (0) without a CUDA device, then measures each
// into `report` with a progress line per point; 1 when a payload failed to validate.
int measure_gpu_rates(const std::vector<std::pair<std::string, RateConfig>>& points,
                      const std::string& experiment, Report& report);

}  // namespace dissect::bench::gpu
