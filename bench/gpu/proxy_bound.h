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

// carried: the rate (Mmsg/s); ceiling: the host engine's own rate with the workers' threads and
// QPs (host-nic-ceiling); chain: descriptors per post; busy_percent: the workers' passes that
// found work. Chains near B mean the rings held a backlog (not the producers); workers that then
// found work in few of their passes were waiting for send-queue room, i.e. for the model's
// completions (measured on the H200 at 16 CTAs per endpoint: chains of 12, 0.2 % of passes busy).
// Workers busy in most passes are the bound themselves.
inline std::string proxy_bottleneck(double carried, double ceiling, double chain, double busy_percent,
                                    uint32_t batch, const softnic::TimingProfile& profile) {
  if (profile.enabled && profile.message_rate_mps > 0 && carried >= 0.8 * profile.message_rate_mps) {
    return "the " + std::string(softnic::profile_name(profile)) + " profile's message-rate cap";
  }
  if (carried >= 0.8 * ceiling) return "NIC model: the softnic host engine (rate >= 80 % of its ceiling)";
  if (busy_percent >= 80) return "proxy workers (busy in " + one_decimal(busy_percent) + " % of their passes)";
  if (batch > 1 && chain >= 0.5 * batch) {
    return "NIC model: the softnic host engine (chains of " + one_decimal(chain) + " of B = " +
           std::to_string(batch) + ", workers busy in only " + one_decimal(busy_percent) +
           " % of their passes: they waited for send-queue room)";
  }
  return "GPU producers (chains of " + one_decimal(chain) + ", workers busy in " + one_decimal(busy_percent) +
         " % of their passes: they waited for descriptors)";
}

}  // namespace dissect::bench::gpu
