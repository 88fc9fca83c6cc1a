// `dissect proxy-latency`: the proxy rows of Table 3, baseline vs tuned handoff (softnic, host
// producers: host threads stand in for GPU threads).
//
//   issue           enqueue of one 16 B descriptor (reserve, room check, store, publish)
//   put+completion  issue and the wait on the ring's completion counter (worker saw the CQE)
//   round trip      producer A's write lands in B; B, polling it, writes it back through its own
//                   ring; A sees it
//   16 B store      one 16 B release store to host memory, timed the same way in the same run:
//                   the reference the tuned issue time is compared with (issue #4: within 2x)
//
// T = 1 worker serving R = 2 rings (A's and B's), B = 1, one outstanding request.
#include <atomic>
#include <thread>

#include "dissect/bench/experiment.h"
#include "dissect/bench/flag_help.h"
#include "dissect/bench/progress.h"
#include "proxy_bench_rig.h"

namespace dissect::bench {
namespace {

constexpr uint32_t kLanding = 0;  // the word each side polls
constexpr uint32_t kSource = 1;   // the word each side sends from

template <typename Handoff>
bool issue_and_complete(ProxyBenchRig& rig, const ProxyLatencyOptions& o, std::vector<double>* issue,
                        std::vector<double>* completion) {
  const proxy::RingHandle ring = rig.proxy->ring(0);
  bool valid = true;
  for (uint64_t i = 0; i < o.warmup + o.iterations; ++i) {
    rig.a[kSource] = i + 1;
    const uint64_t t0 = now_ns();
    const uint64_t index = enqueue_or_throw<Handoff>(ring, write_word(0, kSource));
    const uint64_t t1 = now_ns();
    check(proxy::wait_completion(ring, index), "completion");
    const uint64_t t2 = now_ns();
    valid &= __atomic_load_n(&rig.b[kSource], __ATOMIC_ACQUIRE) == i + 1;
    if (i >= o.warmup) {
      issue->push_back((t1 - t0) / 1e3);
      completion->push_back((t2 - t0) / 1e3);
    }
  }
  return valid;
}

uint64_t wait_word(uint64_t* word, uint64_t value) {
  BoundedWait wait;
  while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != value) {
    if (wait.expired()) {
      throw Error("proxy-latency: timed out waiting for the landing word to become " + std::to_string(value));
    }
  }
  return now_ns();
}

// A writes i into B's landing word through ring 0; B answers through ring 1 into A's.
template <typename Handoff>
bool round_trip(ProxyBenchRig& rig, const ProxyLatencyOptions& o, std::vector<double>* samples) {
  const uint64_t total = o.warmup + o.iterations;
  std::atomic<bool> ok{true};
  std::thread responder([&] {
    try {
      const proxy::RingHandle ring = rig.proxy->ring(1);
      for (uint64_t i = 1; i <= total; ++i) {
        wait_word(&rig.b[kLanding], i);
        rig.b[kSource] = i;
        check(proxy::wait_completion(ring, enqueue_or_throw<Handoff>(ring, {proxy::Operation::write, 1, 8,
                                                                           kSource * 8, kLanding * 8})),
              "reply");
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
      ok = false;
    }
  });
  const proxy::RingHandle ring = rig.proxy->ring(0);
  for (uint64_t i = 1; i <= total && ok; ++i) {
    rig.a[kSource] = i;
    const uint64_t t0 = now_ns();
    const uint64_t index = enqueue_or_throw<Handoff>(ring, {proxy::Operation::write, 0, 8, kSource * 8, kLanding * 8});
    const uint64_t t1 = wait_word(&rig.a[kLanding], i);
    check(proxy::wait_completion(ring, index), "ping completion");
    if (i > o.warmup) samples->push_back((t1 - t0) / 1e3);
  }
  responder.join();
  return ok;
}

std::vector<double> store16_samples(const ProxyLatencyOptions& o) {
  alignas(64) static proxy::Descriptor target[4];
  std::vector<double> samples;
  const proxy::Descriptor d = proxy::encode(write_word(0, 1), 1);
  for (uint64_t i = 0; i < o.warmup + o.iterations; ++i) {
    const uint64_t t0 = now_ns();
    proxy::store_descriptor_release(&target[i & 3], d);
    const uint64_t t1 = now_ns();
    if (i >= o.warmup) samples.push_back((t1 - t0) / 1e3);
  }
  return samples;
}

template <typename Handoff>
ProxyLatencyRow measure_row(const ProxyLatencyOptions& o, ProxyLatencyResult* result, proxy::Handoff kind) {
  ProxyLatencyRow row;
  row.handoff = kind;
  row.payload_validated = true;
  for (uint64_t run = 0; run < o.runs; ++run) {
    proxy::ProxyConfig config;
    config.workers = 1;
    config.rings = 2;
    config.batch = 1;
    config.ring_entries = o.ring_entries;
    config.handoff = kind;
    ProxyBenchRig rig(config, o.placement, 64);
    rig.proxy->start();
    std::vector<double> issue, completion, trip;
    row.payload_validated &= issue_and_complete<Handoff>(rig, o, &issue, &completion);
    row.payload_validated &= round_trip<Handoff>(rig, o, &trip);
    row.issue.push_back(summarize(issue));
    row.put_completion.push_back(summarize(completion));
    row.round_trip.push_back(summarize(trip));
    result->store16_reference.push_back(summarize(store16_samples(o)));
    result->worker_clocks = rig.worker_clocks();
    result->placement = rig.placement();
    if (o.progress) {
      o.progress->done(std::string("proxy ") + proxy::to_string(kind) + ", run " + std::to_string(run + 1));
    }
  }
  return row;
}

}  // namespace

ProxyLatencyResult measure_proxy_latency(const ProxyLatencyOptions& o) {
  ProxyLatencyResult result;
  result.rows.push_back(measure_row<proxy::baseline>(o, &result, proxy::Handoff::baseline));
  result.rows.push_back(measure_row<proxy::tuned>(o, &result, proxy::Handoff::tuned));
  return result;
}

namespace {

int run_proxy_latency(const Arguments& arguments, Report& report) {
  arguments.provider({"softnic"});
  const bool quick = arguments.flag("quick", "2,000 timed and 200 warm-up operations per run instead of 20,000 and 1,000");
  ProxyLatencyOptions o;
  o.iterations = arguments.integer("iterations", quick ? 2000 : 20000, 1, 100'000'000,
                                   "timed operations per run, one outstanding");
  o.warmup = arguments.integer("warmup", quick ? 200 : 1000, 0, 100'000'000,
                               "operations per run before the timed ones, discarded");
  o.runs = arguments.integer("runs", 3, 1, 100, flag_help::RUNS);
  o.ring_entries = read_ring_entries(arguments);
  const std::string cores = read_cores(arguments, o.placement);
  arguments.check_all_used();
  Progress progress("proxy-latency", 2 * o.runs);
  o.progress = &progress;
  const ProxyLatencyResult m = measure_proxy_latency(o);
  for (const ProxyLatencyRow& row : m.rows) {
    Result r = proxy_result("proxy-latency", std::string("proxy ") + proxy::to_string(row.handoff));
    r.knobs = {{"handoff", proxy::to_string(row.handoff)}, {"workers (T)", "1"}, {"rings (R)", "2"},
               {"batch (B)", "1"}, {"ring_entries", std::to_string(o.ring_entries)},
               {"pinning", m.placement}, {"outstanding", "1"},
               {"iterations", std::to_string(o.iterations)}, {"warmup", std::to_string(o.warmup)}};
    r.metrics = {{"issue", "us", row.issue}, {"put+completion", "us", row.put_completion},
                 {"round trip", "us", row.round_trip}};
    r.payload_validated = row.payload_validated;
    add_clock_environment(m.worker_clocks, "", &r.environment);
    report.add(r);
  }
  Result store = proxy_result("proxy-latency", "16 B release store to host memory (reference)");
  store.submitter = "host thread";
  store.metrics = {{"issue", "us", m.store16_reference}};
  store.payload_validated = true;
  add_clock_environment(m.worker_clocks, "", &store.environment);
  report.add(store);
  for (const ProxyLatencyRow& row : m.rows) {
    if (!row.payload_validated) throw Error(std::string("proxy-latency: payload validation failed for ") + proxy::to_string(row.handoff));
  }
  return 0;
}

const bool registered = register_experiment(
    {"proxy-latency", "Table 3 proxy rows: issue, put+completion, round trip, baseline vs tuned (softnic, host producers)",
     run_proxy_latency, true});

}  // namespace
}  // namespace dissect::bench
