// What bounded a mini-proxy rate with GPU producers (gpu-load's background, gpu-proxy-rate's
// points), read from what the workers did. The report reads a bottleneck that names the "NIC
// model" (or "softnic", "engine") as model-bound, so only the first two answers may say so.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "dissect/softnic/profile.h"

namespace dissect::bench::gpu {

inline std::string one_decimal(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", v);
  return text;
}

// What the workers did over the run: `chain` descriptors per post, `busy_percent` of their passes
// found work, `full_percent` ended with no send-queue room (waiting for the NIC's completions).
struct WorkerPasses {
  double chain = 0, busy_percent = 0, full_percent = 0;
};

// The workers' send queues as the emulated NIC sees them: `qps` worker QPs of `sq_wqebbs` WQEBBs,
// each WQE an 8 B pointer write of one WQEBB.
struct WorkerQueues {
  uint32_t qps = 0, sq_wqebbs = 0;
};

// What a NIC with this profile's latency can carry on those queues (Little's law): each WQEBB of a
// send queue is taken from its post until its CQE, at least the profile's modelled doorbell-to-CQE
// of an 8 B pointer write, so at most sq_wqebbs / that latency per QP; in Mmsg/s, 0 under `fast`
// (no latency, no such bound). The workers' own time between a CQE and the next post only lowers it.
inline double in_flight_bound_mmsgs(const WorkerQueues& q, const softnic::TimingProfile& profile) {
  if (!profile.enabled) return 0;
  const double latency_ns = static_cast<double>(softnic::modelled_doorbell_to_cqe_ns(profile, true, 0));
  return latency_ns > 0 ? 1e3 * q.qps * q.sq_wqebbs / latency_ns : 0;
}

// carried: the rate (Mmsg/s); ceiling: the host engine's own rate with the workers' threads and
// QPs (host-nic-ceiling). Below 80 % of that ceiling the workers' passes decide: a send queue left
// full in most of them means the NIC completes too slowly for this load, which is the profile's
// latency when the rate is at 80 % of what the queues can hold in flight over it (a ConnectX with
// that latency would stop there too) and the engine otherwise (on 1-WQE doorbells it is slower
// than on the ceiling's 16); workers busy in most passes are the bound themselves, and otherwise
// the workers waited for descriptors, i.e. for the GPU producers. None of the emulated NIC's
// answers may name the model, the softnic or its engine (the report reads those words as
// model-bound).
inline std::string proxy_bottleneck(double carried, double ceiling, const WorkerPasses& w,
                                    const softnic::TimingProfile& profile, const WorkerQueues& queues) {
  const std::string name = softnic::profile_name(profile);
  if (profile.enabled && profile.message_rate_mps > 0 && carried >= 0.8 * profile.message_rate_mps) {
    return "the " + name + " profile's message-rate cap";
  }
  if (carried >= 0.8 * ceiling) return "NIC model: the softnic host engine (rate >= 80 % of its ceiling)";
  const double in_flight = in_flight_bound_mmsgs(queues, profile);
  if (w.full_percent >= 50 && in_flight > 0 && carried >= 0.8 * in_flight) {
    return "the " + name + " profile's completion latency over the workers' send queues (" +
           std::to_string(queues.qps) + " x " + std::to_string(queues.sq_wqebbs) + " WQEBBs in flight, " +
           one_decimal(in_flight) + " Mmsg/s by Little's law; full at the end of " + one_decimal(w.full_percent) +
           " % of the passes): a NIC of this latency holds them the same";
  }
  if (w.full_percent >= 50) {
    return "NIC model: the softnic host engine (the send queue was full at the end of " + one_decimal(w.full_percent) +
           " % of the workers' passes: they waited for its completions; chains of " + one_decimal(w.chain) + ")";
  }
  if (w.busy_percent >= 80) return "proxy workers (busy in " + one_decimal(w.busy_percent) + " % of their passes)";
  return "GPU producers (chains of " + one_decimal(w.chain) + ", workers busy in " + one_decimal(w.busy_percent) +
         " % and the send queue full in " + one_decimal(w.full_percent) + " % of their passes: they waited for descriptors)";
}

}  // namespace dissect::bench::gpu
