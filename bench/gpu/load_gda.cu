// gpu-load, mini-gda: one run of one point on Q loopback QPs of the softnic GPU engine
// (load_kernel.cuh), its window read back and its payload validated.
//
// Payload validation: each background CTA's LOAD_SLOTS slots hold its last LOAD_SLOTS messages
// (slot m % LOAD_SLOTS holds load_value(m, cta)); both probe landing words hold the last request
// (warmup + recorded round trips).
#include <algorithm>
#include <string>
#include <vector>

#include "load.h"
#include "load_kernel.cuh"

namespace dissect::bench::gpu {
namespace {

std::string describe_failure(const uint32_t failure[3]) {
  return std::string("QP ") + std::to_string(failure[1]) + ": " + probe_status_text(failure[0]) +
         " failed (SendQueueState::error " + std::to_string(failure[2]) + ")";
}

struct Scratch {
  LoadArgs args{};
  uint32_t background_ctas = 0;
};

Scratch prepare(LoopbackQps& q, const LoadConfig& c, const QueueLayout& l) {
  Scratch s;
  s.background_ctas = 2 * l.producers;
  LoadArgs& a = s.args;
  a.targets = q.targets();
  a.layout = l;
  a.batch = c.batch;
  a.pace_period_ns = pace_period_ns(c.pace_mmsgs, s.background_ctas, c.batch);
  a.probe = probe_plan(c, l, [&](size_t bytes) { return q.scratch(bytes); });
  a.posted = static_cast<unsigned long long*>(q.scratch(8 * size_t{std::max(1u, s.background_ctas)}));
  a.failure = static_cast<uint32_t*>(q.scratch(16));
  return s;
}

bool background_valid(const LoopbackQps& q, const QueueLayout& l, const std::vector<unsigned long long>& posted) {
  for (uint32_t b = 0; b < 2 * l.producers; ++b) {
    const uint32_t endpoint = b / l.producers, producer = b % l.producers;
    const LoopbackTarget& t = q.host_targets()[l.background(endpoint, producer)];
    uint64_t slots[LOAD_SLOTS];
    q.read(slots, reinterpret_cast<const uint64_t*>(t.dst + load_slot_offset(l, producer, 0)), LOAD_SLOTS);
    const uint64_t m = posted[b];
    for (uint64_t i = m > LOAD_SLOTS ? m - LOAD_SLOTS : 0; i < m; ++i) {
      if (slots[i % LOAD_SLOTS] != load_value(i, b)) return false;
    }
  }
  return true;
}

bool probe_valid(const LoopbackQps& q, const QueueLayout& l, uint64_t last) {
  uint64_t request = 0, reply = 0;
  q.read(&request, reinterpret_cast<const uint64_t*>(q.host_targets()[l.probe(0)].dst), 1);
  q.read(&reply, reinterpret_cast<const uint64_t*>(q.host_targets()[l.probe(1)].dst), 1);
  return request == last && reply == last;
}

const void* kernel_for(const QueueLayout& l) {
  // The probe's QP is shared when the background posts on it too (the probe's sharing must match
  // every other submitter's there).
  return l.submitters_on(l.probe(0)) > 1 ? reinterpret_cast<const void*>(&load_kernel<gda::Sharing::shared>)
                                         : reinterpret_cast<const void*>(&load_kernel<gda::Sharing::exclusive>);
}

}  // namespace

LoadRun run_gda_load(const LoadConfig& c, const QueueLayout& l) {
  LoopbackOptions o;
  o.device = c.device;
  o.engine_ctas = c.engine_ctas;
  o.engine_warps_per_cta = c.engine_warps_per_cta;
  o.nic_profile = c.nic_profile;
  o.qps = l.queues();
  o.sq_wqebbs = c.sq_wqebbs;
  o.buffer_bytes = LOAD_LANDING_BYTES + size_t{std::max(1u, l.most_producers_per_queue())} * LOAD_SLOTS * 8;
  LoopbackQps q(o);
  Scratch s = prepare(q, c, l);
  const void* kernel = kernel_for(l);
  q.start({kernel}, "gpu-load kernel");
  void* args[] = {&s.args};
  check_cuda(cudaLaunchKernel(kernel, dim3(2 + s.background_ctas), dim3(32), args, 0, q.stream()),
             "launch load_kernel");
  q.wait("gpu-load kernel (probe and background)", 60 + (c.ramp_ns + c.budget_ns) / 1e9);

  LoadRun run;
  ProbeWindow w{};
  uint32_t failure[3] = {};
  q.read(&w, s.args.probe.window, 1);
  q.read(failure, s.args.failure, 3);
  if (failure[0] != 0 || w.status != CAUSE_NONE) {
    run.failure = failure[0] != 0 ? describe_failure(failure)
                                  : "probe QP " + std::to_string(l.probe(0)) + ": " + probe_status_text(w.status) +
                                        " failed after " + std::to_string(w.samples) + " round trips";
    return run;
  }
  std::vector<unsigned long long> cycles(w.samples);
  std::vector<unsigned long long> posted(std::max(1u, s.background_ctas));
  q.read(cycles.data(), s.args.probe.round_trip, w.samples);
  q.read(posted.data(), s.args.posted, posted.size());
  run.sm_clock_mhz = clock_mhz(w.timer);
  for (unsigned long long cy : cycles) run.round_trip_us.push_back(cy / run.sm_clock_mhz);
  const uint64_t window_ns = w.end_ns - w.start_ns;
  run.window_ms = window_ns / 1e6;
  // The CTAs' own counts: the probe's messages are not among them.
  run.background_mmsgs =
      l.producers ? carried_mmsgs(w.completed_start, w.completed_end, 0, false, window_ns) : 0;
  run.deepest_backlog = q.deepest_backlog();
  run.valid = w.samples > 0 && background_valid(q, l, posted) && probe_valid(q, l, uint64_t{c.warmup} + w.samples);
  if (!run.valid) run.failure = "payload: a background slot or a probe landing word does not hold its last value";
  return run;
}

}  // namespace dissect::bench::gpu
