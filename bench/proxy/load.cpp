// `dissect proxy-load`: Figure 6, round trip under load (softnic, host producers: host threads
// stand in for the background CTAs and for the probe).
//
// Two endpoints, A and B, share one softnic (window 0 = A -> B, window 1 = B -> A). On each
// endpoint `background` producers issue 8 B writes to the other endpoint back to back, through
// K = ceil(T / 2) background rings per endpoint (producer p of endpoint e on ring e*K + p % K;
// several producers per ring use Sharing::shared). Meanwhile a probe does an 8 B request-reply
// round trip: A writes into B's landing word, a responder on B polls it and writes it back into
// A's, A polls for it. The probe's two writes go either
//   shared:  through the first background ring of their endpoint (queued behind the bulk traffic)
//   private: through a ring of their own per endpoint (R = 2K + 2), served by the same workers
// Per configuration the Result carries the probe's round trip (p50, p99) and the background message
// rate carried while the probe ran, as metrics of the same row.
//
// Payload validation: every background write carries its producer's running count; after the
// producers stop and their last write completed, each destination word must equal the last
// count; every probe reply must carry the probe's sequence number.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <sstream>
#include <thread>

#include "dissect/bench/experiment.h"
#include "dissect/bench/flag_help.h"
#include "dissect/bench/progress.h"
#include "proxy_bench_rig.h"

namespace dissect::bench {
namespace {

constexpr uint32_t kLanding = 0;     // the word each endpoint's probe side polls
constexpr uint32_t kSource = 1;      // the word each endpoint's probe side sends from
constexpr uint32_t kBackground = 8;  // first background word; one 64 B line per producer
constexpr uint64_t kProbeWaitNs = 20'000'000'000ull;

struct LoadOptions {
  std::vector<uint32_t> background = {0, 1, 4, 16};  // producers per endpoint
  std::vector<bool> shared_probe = {true, false};
  uint32_t workers = 2;
  uint32_t batch = 16;
  uint32_t ring_entries = 1024;
  proxy::Handoff handoff = proxy::Handoff::tuned;
  uint64_t runs = 3;
  uint64_t probe_ms = 1000;     // the probe's time budget per point and run
  uint64_t ramp_ms = 100;       // background alone before the probe starts
  uint64_t iterations = 20000;  // the probe stops at this many samples or at probe_ms
  uint64_t warmup = 20;         // probe iterations not recorded
  ProxyPlacement placement;
};

struct LoadLayout {
  uint32_t per_endpoint_rings;  // K
  uint32_t rings;               // R
  uint32_t probe_ring[2];       // A's and B's probe ring
};

LoadLayout layout(const LoadOptions& o, bool shared) {
  LoadLayout l;
  l.per_endpoint_rings = std::max<uint32_t>(1, (o.workers + 1) / 2);
  l.rings = 2 * l.per_endpoint_rings + (shared ? 0 : 2);
  l.probe_ring[0] = shared ? 0 : 2 * l.per_endpoint_rings;
  l.probe_ring[1] = shared ? l.per_endpoint_rings : 2 * l.per_endpoint_rings + 1;
  return l;
}

struct LoadRun {
  Summary round_trip;        // us
  double background_mmsgs;   // carried while the probe ran
  uint64_t probe_samples = 0;
  bool valid = true;
  std::vector<proxy::CpuClockState> clocks;
  std::string placement;
};

uint64_t wait_word(const uint64_t* word, uint64_t value, const std::atomic<bool>* abort) {
  BoundedWait wait(kProbeWaitNs);
  while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != value) {
    if (abort != nullptr && abort->load(std::memory_order_relaxed)) return 0;
    if (wait.expired()) {
      throw Error("proxy-load: timed out waiting for the probe word to become " + std::to_string(value));
    }
  }
  return now_ns();
}

template <typename Handoff, proxy::Sharing S>
uint64_t enqueue_shared_or_throw(const proxy::RingHandle& ring, const proxy::Request& request) {
  uint64_t index = 0;
  check(proxy::enqueue<Handoff, S>(ring, request, &index), "enqueue");
  return index;
}

template <typename Handoff>
void background_producer(ProxyBenchRig& rig, uint32_t ring_number, uint32_t endpoint, uint64_t word,
                         const std::atomic<bool>& stop, std::atomic<bool>* ok) {
  try {
    const proxy::RingHandle ring = rig.proxy->ring(ring_number);
    uint64_t* source = endpoint == 0 ? &rig.a[word] : &rig.b[word];
    const uint64_t* destination = endpoint == 0 ? &rig.b[word] : &rig.a[word];
    const proxy::Request request{proxy::Operation::write, endpoint, 8, static_cast<uint32_t>(word * 8), word * 8};
    uint64_t count = 0, index = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      __atomic_store_n(source, ++count, __ATOMIC_RELAXED);
      index = enqueue_shared_or_throw<Handoff, proxy::Sharing::shared>(ring, request);
    }
    if (count == 0) return;
    check(proxy::wait_completion(ring, index), "background completion");
    if (__atomic_load_n(destination, __ATOMIC_ACQUIRE) != count) {
      std::fprintf(stderr, "proxy-load: background word %llu holds %llu, expected %llu\n",
                   static_cast<unsigned long long>(word),
                   static_cast<unsigned long long>(__atomic_load_n(destination, __ATOMIC_ACQUIRE)),
                   static_cast<unsigned long long>(count));
      *ok = false;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    *ok = false;
  }
}

uint64_t background_completed(ProxyBenchRig& rig, uint32_t background_rings) {
  uint64_t n = 0;
  for (uint32_t r = 0; r < background_rings; ++r) n += __atomic_load_n(rig.proxy->ring(r).completed, __ATOMIC_ACQUIRE);
  return n;
}

// The probe: A -> B through probe_ring[0], B -> A through probe_ring[1].
template <typename Handoff, proxy::Sharing S>
void probe(ProxyBenchRig& rig, const LoadOptions& o, const LoadLayout& l, std::vector<double>* samples,
           uint64_t* probe_messages, bool* valid) {
  std::atomic<bool> ok{true}, done{false};
  std::thread responder([&] {
    try {
      const proxy::RingHandle ring = rig.proxy->ring(l.probe_ring[1]);
      for (uint64_t i = 1;; ++i) {
        if (wait_word(&rig.b[kLanding], i, &done) == 0) return;
        rig.b[kSource] = i;
        const uint64_t index = enqueue_shared_or_throw<Handoff, S>(
            ring, {proxy::Operation::write, 1, 8, kSource * 8, kLanding * 8});
        check(proxy::wait_completion(ring, index), "probe reply");
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
      ok = false;
    }
  });
  const proxy::RingHandle ring = rig.proxy->ring(l.probe_ring[0]);
  const uint64_t deadline = now_ns() + o.probe_ms * 1'000'000;
  uint64_t i = 1;
  try {
    for (; ok && i <= o.warmup + o.iterations; ++i) {
      rig.a[kSource] = i;
      const uint64_t t0 = now_ns();
      const uint64_t index =
          enqueue_shared_or_throw<Handoff, S>(ring, {proxy::Operation::write, 0, 8, kSource * 8, kLanding * 8});
      const uint64_t t1 = wait_word(&rig.a[kLanding], i, nullptr);
      check(proxy::wait_completion(ring, index), "probe completion");
      if (i > o.warmup) samples->push_back((t1 - t0) / 1e3);
      if (t1 > deadline && samples->size() >= 1) {
        ++i;
        break;
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    ok = false;
  }
  done = true;
  responder.join();
  *probe_messages = 2 * (i - 1);
  *valid &= ok.load();
}

template <typename Handoff>
LoadRun one_run(const LoadOptions& o, uint32_t background, bool shared) {
  const LoadLayout l = layout(o, shared);
  proxy::ProxyConfig config;
  config.workers = o.workers;
  config.rings = l.rings;
  config.batch = o.batch;
  config.ring_entries = o.ring_entries;
  config.handoff = o.handoff;
  ProxyBenchRig rig(config, o.placement, kBackground + 2 * size_t{background} * 8 + 8);
  rig.proxy->start();

  std::atomic<bool> stop{false}, ok{true};
  std::vector<std::thread> producers;
  for (uint32_t e = 0; e < 2; ++e) {
    for (uint32_t p = 0; p < background; ++p) {
      const uint64_t word = kBackground + (uint64_t{e} * background + p) * 8;
      producers.emplace_back(background_producer<Handoff>, std::ref(rig), e * l.per_endpoint_rings + p % l.per_endpoint_rings,
                             e, word, std::cref(stop), &ok);
    }
  }
  if (background > 0) std::this_thread::sleep_for(std::chrono::milliseconds(o.ramp_ms));

  LoadRun run;
  std::vector<double> samples;
  uint64_t probe_messages = 0;
  const uint64_t c0 = background_completed(rig, 2 * l.per_endpoint_rings);
  const uint64_t t0 = now_ns();
  if (shared) {
    probe<Handoff, proxy::Sharing::shared>(rig, o, l, &samples, &probe_messages, &run.valid);
  } else {
    probe<Handoff, proxy::Sharing::exclusive>(rig, o, l, &samples, &probe_messages, &run.valid);
  }
  const uint64_t t1 = now_ns();
  const uint64_t c1 = background_completed(rig, 2 * l.per_endpoint_rings);
  stop = true;
  for (auto& t : producers) t.join();

  uint64_t carried = c1 - c0;
  if (shared) carried = carried > probe_messages ? carried - probe_messages : 0;
  run.background_mmsgs = background == 0 ? 0.0 : carried / ((t1 - t0) / 1e3);
  run.round_trip = summarize(samples);
  run.probe_samples = samples.size();
  run.valid &= ok.load() && !samples.empty();
  run.clocks = rig.worker_clocks();
  run.placement = rig.placement();
  return run;
}

std::vector<uint32_t> parse_list(const std::string& text, const std::string& flag) {
  std::vector<uint32_t> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    const unsigned long v = std::strtoul(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v > 1024) {
      throw InvalidArgument("--" + flag + ": '" + item + "' is not a count in 0..1024 (in '" + text + "')");
    }
    out.push_back(static_cast<uint32_t>(v));
  }
  if (out.empty()) throw InvalidArgument("--" + flag + " is empty");
  return out;
}

int run_proxy_load(const Arguments& arguments, Report& report) {
  arguments.provider({"softnic"});
  const bool quick = arguments.flag("quick", "shorter probes and ramps (300 ms, 50 ms), 2,000 round trips, one run");
  LoadOptions o;
  o.background = parse_list(arguments.text("background", "0,1,4,16",
                                                  "background producers per endpoint, a comma list (Figure 6's x axis)"), "background");
  o.shared_probe.clear();
  for (const std::string& ring : arguments.choices("probe-ring", "shared,private", {"shared", "private"},
                                                          "the probe's ring: shared with the background traffic or private")) {
    o.shared_probe.push_back(ring == "shared");
  }
  o.workers = static_cast<uint32_t>(arguments.integer("workers", 2, 1, 64, "proxy workers T serving every ring"));
  o.batch = static_cast<uint32_t>(arguments.integer("batch", 16, 1, 64, "descriptors a worker posts per doorbell (the paper's B)"));
  o.ring_entries = read_ring_entries(arguments);
  o.handoff = read_handoff(arguments);
  o.runs = arguments.integer("runs", quick ? 1 : 3, 1, 100, flag_help::RUNS);
  o.probe_ms = arguments.integer("probe-ms", quick ? 300 : 1000, 1, 60'000,
                                 "how long the probe runs per configuration and run, ms");
  o.ramp_ms = arguments.integer("ramp-ms", quick ? 50 : 100, 0, 60'000,
                                "background traffic before the probe starts, ms");
  o.iterations = arguments.integer("iterations", quick ? 2000 : 20000, 1, 100'000'000,
                                   "most probe round trips per configuration and run (the probe also stops at --probe-ms)");
  o.warmup = arguments.integer("warmup", quick ? 10 : 20, 0, 100'000'000,
                               "probe round trips discarded before the timed ones");
  const std::string cores = read_cores(arguments, o.placement);
  arguments.check_all_used();

  Progress progress("proxy-load", o.shared_probe.size() * o.background.size());
  bool all_valid = true;
  for (const bool shared : o.shared_probe) {
    for (const uint32_t background : o.background) {
      const LoadLayout l = layout(o, shared);
      Metric trip{"round trip", "us", {}}, trip99{"round trip p99", "us", {}},
          carried{"background rate", "Mmsg/s", {}};
      bool valid = true;
      uint64_t samples = 0;
      LoadRun last;
      for (uint64_t run = 0; run < o.runs; ++run) {
        last = o.handoff == proxy::Handoff::tuned ? one_run<proxy::tuned>(o, background, shared)
                                                  : one_run<proxy::baseline>(o, background, shared);
        trip.runs.push_back(last.round_trip);
        trip99.runs.push_back(summarize({last.round_trip.p99}));
        carried.runs.push_back(summarize({last.background_mmsgs}));
        valid &= last.valid;
        samples += last.probe_samples;
      }
      const std::string ring_kind = shared ? "shared" : "private";
      Result r = proxy_result("proxy-load", "bg " + std::to_string(background) + "/endpoint, probe " + ring_kind);
      r.knobs = {{"background producers per endpoint", std::to_string(background)},
                 {"background producers total", std::to_string(2 * background)},
                 {"probe ring", ring_kind},
                 {"handoff", proxy::to_string(o.handoff)},
                 {"workers (T)", std::to_string(o.workers)},
                 {"rings (R)", std::to_string(l.rings)},
                 {"background rings per endpoint", std::to_string(l.per_endpoint_rings)},
                 {"batch (B)", std::to_string(o.batch)},
                 {"message bytes", "8"},
                 {"ring_entries", std::to_string(o.ring_entries)},
                 {"probe budget ms", std::to_string(o.probe_ms)},
                 {"pinning", cores.empty() ? last.placement : "cores " + cores}};
      r.metrics = {trip, trip99, carried};
      r.payload_validated = valid;
      r.environment = {{"probe samples (all runs)", std::to_string(samples)},
                       {"round trip p99 metric", "each run's p99 as that run's value"},
                       {"background rate", "background WQEs completed on the background rings while the probe ran"
                                           " (the probe's own excluded), over the probe's duration"}};
      add_clock_environment(last.clocks, "", &r.environment);
      all_valid &= valid;
      progress.done(r.label);
      report.add(r);
    }
  }
  if (!all_valid) throw Error("proxy-load: payload validation failed (see the rows with payload_validated false)");
  return 0;
}

const bool registered = register_experiment(
    {"proxy-load",
     "Figure 6: probe round trip under background load, shared vs private ring (softnic, host producers)",
     run_proxy_load, true});

}  // namespace
}  // namespace dissect::bench
