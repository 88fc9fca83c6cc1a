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

// carried: the rate (Mmsg/s); ceiling: the host engine's own rate with the workers' threads and
// QPs (host-nic-ceiling). Below 80 % of that ceiling the workers' passes decide: a send queue left
// full in most of them means the engine completes too slowly for this load (on 1-WQE doorbells it
// is slower than on the ceiling's 16), workers busy in most passes are the bound themselves, and
// otherwise the workers waited for descriptors, i.e. for the GPU producers.
inline std::string proxy_bottleneck(double carried, double ceiling, const WorkerPasses& w,
                                    const softnic::TimingProfile& profile) {
  if (profile.enabled && profile.message_rate_mps > 0 && carried >= 0.8 * profile.message_rate_mps) {
    return "the " + std::string(softnic::profile_name(profile)) + " profile's message-rate cap";
  }
  if (carried >= 0.8 * ceiling) return "NIC model: the softnic host engine (rate >= 80 % of its ceiling)";
  if (w.full_percent >= 50) {
    return "NIC model: the softnic host engine (the send queue was full at the end of " + one_decimal(w.full_percent) +
           " % of the workers' passes: they waited for its completions; chains of " + one_decimal(w.chain) + ")";
  }
  if (w.busy_percent >= 80) return "proxy workers (busy in " + one_decimal(w.busy_percent) + " % of their passes)";
  return "GPU producers (chains of " + one_decimal(w.chain) + ", workers busy in " + one_decimal(w.busy_percent) +
         " % and the send queue full in " + one_decimal(w.full_percent) + " % of their passes: they waited for descriptors)";
}

}  // namespace dissect::bench::gpu
