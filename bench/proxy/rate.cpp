// `dissect proxy-rate`: Figure 7, 8 B message rate against worker count at batch 1 and 16
// (softnic, host producers). T workers serve R = T rings, one producer thread per ring, each
// enqueueing 8 B writes back to back (tuned handoff unless --handoff says otherwise); the rate is
// messages over the time from the start signal to the last completion. Every write carries its
// message number, checked in the destination afterwards.
#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "dissect/bench/experiment.h"
#include "dissect/bench/flag_help.h"
#include "dissect/bench/progress.h"
#include "dissect/common/wait.h"
#include "../cpu/host_ceiling.h"
#include "proxy_bench_rig.h"

namespace dissect::bench {
namespace {

template <typename Handoff>
void produce(ProxyBenchRig& rig, uint32_t ring_number, uint64_t first, uint64_t count,
             const std::atomic<bool>& go, std::atomic<bool>* ok) {
  try {
    while (!go.load(std::memory_order_acquire)) spin_pause();
    const proxy::RingHandle ring = rig.proxy->ring(ring_number);
    uint64_t index = 0;
    for (uint64_t m = first; m < first + count; ++m) {
      rig.a[m] = m + 1;
      index = enqueue_or_throw<Handoff>(ring, write_word(0, m));
    }
    if (count != 0) check(proxy::wait_completion(ring, index), "completion");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    *ok = false;
  }
}

// In words, what limited the point: the cores, the NIC model (at 80 % of its measured ceiling), the
// workers (busy in most passes), or else the producers and the handoff. The last must not name the
// model: the report reads a bottleneck that says "softnic", "model" or "engine" as model-bound.
std::string saturation(const ProxyRatePoint& p, uint32_t cores, uint32_t engine_threads) {
  const uint32_t spinning = p.producers + p.workers + engine_threads;
  if (spinning > cores) {
    return "host cores: " + std::to_string(spinning) + " spinning threads (" + std::to_string(p.producers) +
           " producers, " + std::to_string(p.workers) + " workers, " +
           std::to_string(engine_threads) + " softnic engine threads) on " +
           std::to_string(cores) + " cores";
  }
  std::vector<double> rates = p.rate_mmsgs;
  std::sort(rates.begin(), rates.end());
  const double rate = rates.empty() ? 0 : rates[rates.size() / 2];
  if (rate >= 0.8 * p.ceiling_mmsgs) {
    return "softnic engine (" + std::to_string(engine_threads) + " host thread(s); the rate is " +
           std::to_string(static_cast<int>(100 * rate / p.ceiling_mmsgs)) + " % of its measured ceiling, " +
           std::to_string(p.ceiling_mmsgs) + " Mmsg/s)";
  }
  if (p.worker_full >= 0.5) {
    return "softnic engine (the send queue was full at the end of " + std::to_string(static_cast<int>(100 * p.worker_full)) +
           " % of the workers' passes: they waited for its completions)";
  }
  if (p.worker_busy > 0.9) return "proxy workers (busy in >90% of polling passes)";
  return "producers and the handoff (below 80 % of the measured ceiling, " + std::to_string(p.ceiling_mmsgs) +
         " Mmsg/s; workers busy in " + std::to_string(static_cast<int>(100 * p.worker_busy)) + " % of passes)";
}

template <typename Handoff>
double one_run(const ProxyRateOptions& o, ProxyRatePoint* p) {
  proxy::ProxyConfig config;
  config.workers = p->workers;
  config.rings = p->rings;
  config.batch = p->batch;
  config.ring_entries = o.ring_entries;
  config.handoff = o.handoff;
  const uint64_t per_producer = o.messages / p->producers;
  const uint64_t total = per_producer * p->producers;
  ProxyBenchRig rig(config, o.placement, total + 8, o.engine_threads);
  rig.proxy->start();
  std::atomic<bool> go{false}, ok{true};
  std::vector<std::thread> producers;
  for (uint32_t t = 0; t < p->producers; ++t) {
    producers.emplace_back(produce<Handoff>, std::ref(rig), t % p->rings, t * per_producer, per_producer,
                           std::cref(go), &ok);
  }
  const uint64_t t0 = now_ns();
  go.store(true, std::memory_order_release);
  for (auto& t : producers) t.join();
  const uint64_t t1 = now_ns();
  bool valid = ok.load();
  for (uint64_t m = 0; m < total && valid; ++m) valid = rig.b[m] == m + 1;
  p->payload_validated = valid;
  uint64_t descriptors = 0, posts = 0, passes = 0, busy = 0, full = 0;
  for (const auto& s : rig.proxy->stats()) {
    descriptors += s.descriptors;
    posts += s.posts;
    passes += s.passes;
    busy += s.busy_passes;
    full += s.full_passes;
  }
  p->mean_chain = posts ? double(descriptors) / posts : 0;
  p->worker_busy = passes ? double(busy) / passes : 0;
  p->worker_full = passes ? double(full) / passes : 0;
  p->worker_clocks = rig.worker_clocks();
  return total / ((t1 - t0) / 1e3);  // messages per microsecond = M msg/s
}

}  // namespace

std::vector<ProxyRatePoint> measure_proxy_rate(const ProxyRateOptions& o) {
  std::vector<ProxyRatePoint> points;
  const uint32_t cores = usable_cores();
  for (uint32_t batch : o.batches) {
    for (uint32_t workers : o.workers) {
      ProxyRatePoint p;
      p.workers = workers;
      p.rings = workers;
      p.producers = workers;
      p.batch = batch;
      p.payload_validated = true;
      for (uint64_t run = 0; run < o.runs; ++run) {
        const double rate = o.handoff == proxy::Handoff::tuned ? one_run<proxy::tuned>(o, &p)
                                                               : one_run<proxy::baseline>(o, &p);
        p.rate_mmsgs.push_back(rate);
      }
      p.ceiling_mmsgs = host_engine_ceiling(o.engine_threads, workers, "fast");
      p.saturated = saturation(p, cores, o.engine_threads);
      points.push_back(p);
      if (o.progress) o.progress->done("T=" + std::to_string(workers) + " B=" + std::to_string(batch));
    }
  }
  return points;
}

namespace {

int run_proxy_rate(const Arguments& arguments, Report& report) {
  arguments.provider({"softnic"});
  const bool quick = arguments.flag("quick", "100,000 messages per producer and one run instead of 400,000 and 3");
  ProxyRateOptions o;
  o.messages = arguments.integer("messages", quick ? 100000 : 400000, 1000, 1'000'000'000,
                                 "8 B messages per producer (one per ring) and run");
  o.runs = arguments.integer("runs", quick ? 1 : 3, 1, 100, flag_help::RUNS);
  const uint32_t max_workers = static_cast<uint32_t>(arguments.integer("max-workers", 8, 1, 64,
                                                                          "the sweep's largest worker count T (T = 1 .. this; R = T rings)"));
  o.workers.clear();
  for (uint32_t t = 1; t <= max_workers; ++t) o.workers.push_back(t);
  o.ring_entries = read_ring_entries(arguments);
  o.handoff = read_handoff(arguments);
  o.engine_threads = static_cast<uint32_t>(arguments.integer("engine-threads", 1, 1, 64,
                                                                     "host threads of the softnic engine that executes the WQEs"));
  const std::string cores = read_cores(arguments, o.placement);
  arguments.check_all_used();
  Progress progress("proxy-rate", o.workers.size() * o.batches.size());
  o.progress = &progress;
  bool valid = true;
  for (const ProxyRatePoint& p : measure_proxy_rate(o)) {
    Result r = proxy_result("proxy-rate", "T=" + std::to_string(p.workers) + " B=" + std::to_string(p.batch));
    r.knobs = {{"handoff", proxy::to_string(o.handoff)}, {"workers (T)", std::to_string(p.workers)},
               {"rings (R)", std::to_string(p.rings)}, {"producers", std::to_string(p.producers)},
               {"batch (B)", std::to_string(p.batch)}, {"message bytes", "8"},
               {"messages", std::to_string(o.messages)}, {"ring_entries", std::to_string(o.ring_entries)},
               {"pinning", cores.empty() ? "unpinned" : "cores " + cores},
               {"engine_threads", std::to_string(o.engine_threads)}};
    Metric rate{"message rate", "Mmsg/s", {}};
    for (double v : p.rate_mmsgs) rate.runs.push_back(summarize({v}));
    r.metrics = {rate, Metric{"model ceiling", "Mmsg/s", {summarize({p.ceiling_mmsgs})}}};
    r.payload_validated = p.payload_validated;
    r.environment = {{"mean chain (descriptors per post)", std::to_string(p.mean_chain)},
                     {"worker busy fraction", std::to_string(p.worker_busy)},
                     {"send queue full fraction", std::to_string(p.worker_full)},
                     {"saturated", p.saturated}};
    add_clock_environment(p.worker_clocks, "", &r.environment);
    valid &= p.payload_validated;
    report.add(r);
  }
  if (!valid) throw Error("proxy-rate: payload validation failed (see the rows with payload_validated false)");
  return 0;
}

const bool registered = register_experiment(
    {"proxy-rate", "Figure 7: 8 B proxy message rate vs workers at batch 1 and 16 (softnic, host producers)",
     run_proxy_rate, true});

}  // namespace
}  // namespace dissect::bench
