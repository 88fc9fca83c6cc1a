// The host/device arithmetic of gpu-load and gpu-goodput (Figures 6 and 8 with GPU producers),
// kept apart from the kernels so the CPU tests check it: which queue each background producer and
// the probe use, the pacing of Table 11's paced rows, and the first size reaching 90 % of the link.
//
// A queue is a QP (mini-gda) or a ring (mini-proxy). Two endpoints, A (0) and B (1), each have
// `per_endpoint` background queues; background producer c of endpoint e uses queue
// e * per_endpoint + c % per_endpoint. The probe of endpoint e either shares the first background
// queue of its endpoint (Table 11: "the shared probe uses one background CTA's context") or has a
// queue of its own after the background ones (reserved: 2 * per_endpoint + e).
#pragma once

#include <cstdint>
#include <vector>

#include "dissect/common/device.h"

namespace dissect::bench {

struct QueueLayout {
  uint32_t per_endpoint = 1;  // background queues per endpoint (>= 1)
  uint32_t producers = 0;     // background producers per endpoint
  bool reserved_probe = false;

  DISSECT_HD uint32_t background(uint32_t endpoint, uint32_t producer) const {
    return endpoint * per_endpoint + producer % per_endpoint;
  }
  DISSECT_HD uint32_t probe(uint32_t endpoint) const {
    return reserved_probe ? 2 * per_endpoint + endpoint : endpoint * per_endpoint;
  }
  DISSECT_HD uint32_t queues() const { return 2 * per_endpoint + (reserved_probe ? 2 : 0); }
  DISSECT_HD bool is_background(uint32_t queue) const { return queue < 2 * per_endpoint; }
  // Background producers of one endpoint on `queue` (producers c with c % per_endpoint == q).
  DISSECT_HD uint32_t background_producers_on(uint32_t queue) const {
    if (!is_background(queue)) return 0;
    const uint32_t q = queue % per_endpoint;
    return producers > q ? (producers - q + per_endpoint - 1) / per_endpoint : 0;
  }
  // Everyone who submits on `queue`: background producers, and the probe where it shares it.
  DISSECT_HD uint32_t submitters_on(uint32_t queue) const {
    const bool probe_here = queue == probe(0) || queue == probe(1);
    return background_producers_on(queue) + (probe_here ? 1 : 0);
  }
  // A producer's index among those of its queue: its region of the queue's destination.
  DISSECT_HD uint32_t slot_group(uint32_t producer) const { return producer / per_endpoint; }
  DISSECT_HD uint32_t most_producers_per_queue() const {
    return producers == 0 ? 0 : (producers + per_endpoint - 1) / per_endpoint;
  }
};

// `per_endpoint` queues as asked (0: one per producer), at least one.
inline QueueLayout make_layout(uint32_t producers, uint32_t queues_asked, bool reserved_probe) {
  QueueLayout l;
  l.producers = producers;
  l.per_endpoint = queues_asked == 0 ? (producers == 0 ? 1 : producers) : queues_asked;
  l.reserved_probe = reserved_probe;
  return l;
}

// Paced mode (Table 11): the time between the starts of one producer's units of `unit` messages
// so that `producers` producers together carry `target_mmsgs` million messages per second; 0 when
// unpaced (target 0) or there is no producer.
DISSECT_HD inline double pace_period_ns(double target_mmsgs, uint32_t producers, uint32_t unit) {
  if (target_mmsgs <= 0 || producers == 0) return 0;
  return double(producers) * unit * 1e3 / target_mmsgs;
}

// One producer's schedule. A unit may start once due; the next is due a period after this one was,
// but never before the time this one started. A producer that fell behind by more than a period
// (a slow first lap, a descheduled warp) so starts its next unit at once and then keeps the
// period: it drops the starts it missed instead of bursting through them, which would carry more
// than the target inside the measured window (seen on the H200: 1.107 Mmsg/s paced to 1.0).
struct PaceSchedule {
  double period_ns = 0;  // 0: unpaced, always due
  double due_ns = 0;
  DISSECT_HD PaceSchedule(uint64_t start_ns, double period) : period_ns(period), due_ns(double(start_ns)) {}
  DISSECT_HD bool due(uint64_t now_ns) const { return period_ns <= 0 || double(now_ns) >= due_ns; }
  DISSECT_HD void started(uint64_t now_ns) {
    const double next = due_ns + period_ns;
    due_ns = next > double(now_ns) ? next : double(now_ns);
  }
};

// Background messages carried in a window: the queues' completions over it, less the probe's own
// messages when it shares their queues (two per round trip: the request and the reply).
inline double carried_mmsgs(uint64_t completed_before, uint64_t completed_after, uint64_t probe_messages,
                            bool probe_shares, uint64_t window_ns) {
  if (window_ns == 0 || completed_after < completed_before) return 0;
  uint64_t carried = completed_after - completed_before;
  if (probe_shares) carried = carried > probe_messages ? carried - probe_messages : 0;
  return double(carried) * 1e3 / double(window_ns);
}

// Figure 8's star: the index of the first size (ascending) whose goodput reaches `fraction` of
// `reference`; -1 when none does or there is no reference.
inline int first_size_reaching(const std::vector<double>& goodput, double reference, double fraction = 0.9) {
  if (reference <= 0) return -1;
  for (size_t i = 0; i < goodput.size(); ++i) {
    if (goodput[i] >= fraction * reference) return static_cast<int>(i);
  }
  return -1;
}

// Messages each of `producers` posts at `size` bytes in a pipelined goodput point: the byte
// budget shared out, at most `max_messages` in all, at least `at_least` each (so every point
// outlasts its ramp and every destination slot is written).
inline uint64_t messages_per_producer(uint64_t bytes, uint64_t max_messages, uint64_t size, uint32_t producers,
                                      uint64_t at_least = 64) {
  if (size == 0 || producers == 0) return at_least;
  const uint64_t by_bytes = bytes / (size * producers), cap = max_messages / producers;
  const uint64_t n = by_bytes < cap ? by_bytes : cap;
  return n > at_least ? n : at_least;
}

// Figure 8's sizes: 8 B to 32 KiB by doubling, with DeepSeek-V3's FP8 token (7,168 B) in order.
inline std::vector<uint64_t> figure8_sizes() {
  std::vector<uint64_t> sizes;
  for (uint64_t s = 8; s <= 32768; s *= 2) {
    if (s == 8192) sizes.push_back(7168);
    sizes.push_back(s);
  }
  return sizes;
}

}  // namespace dissect::bench
