// `dissect goodput`: Figure 8, pipelined goodput against payload size for mini-proxy and mini-gda
// side by side (softnic, host producers / host submitters).
//
//   mini-proxy  T workers (default 4), R = T rings, B requests per post (default 16), one host
//               producer per ring enqueueing writes of `size` bytes back to back (the ring's
//               backpressure is the only flow control), then waiting for its last completion
//   mini-gda    G host submitters (default G = T), each with its own QP, posting B writes per
//               doorbell through gda::post_writes, at most `window` WQEs in flight
//
// Goodput = payload bytes delivered / time from the start signal to the last completion, in GB/s
// (10^9 B/s). The softnic has no link model, so the link reference is the mini-gda goodput at
// 1 MiB measured in the same run (the largest size swept when 1 MiB is not); every Result names
// it and the first size at which its path reached 90% of it (`first_size_at_90pct`).
//
// Payload validation: before each size, every producer's source region is filled with a pattern
// that depends on the path, the size, the run and the producer, and its destination region is
// cleared; after the size, each destination must equal its source.
#include <algorithm>
#include <cerrno>
#include <atomic>
#include <cstring>
#include <sstream>
#include <thread>

#include "dissect/bench/experiment.h"
#include "dissect/bench/flag_help.h"
#include "dissect/bench/progress.h"
#include "dissect/bench/loopback_fabric.h"
#include "dissect/gda/gda.h"
#include "proxy_bench_rig.h"

namespace dissect::bench {
namespace {

using GdaPolicy = gda::ordering::system_release_store;
constexpr uint64_t kMiB = 1ull << 20;

struct GoodputOptions {
  std::vector<uint64_t> sizes = {8, 32, 128, 512, 2048, 8192, 32768, 131072, 524288, 1048576};
  uint32_t workers = 4;        // proxy T (= R = producers)
  uint32_t batch = 16;         // proxy B, and mini-gda WQEs per doorbell
  uint32_t gda_threads = 4;    // mini-gda submitters
  uint32_t window = 256;       // mini-gda WQEs in flight per submitter
  uint32_t ring_entries = 1024;
  proxy::Handoff handoff = proxy::Handoff::tuned;
  uint64_t bytes = 1024 * kMiB;     // payload per point (all producers), capped by max_messages
  uint64_t max_messages = 1000000;  // per point (all producers)
  uint64_t min_messages = 64;       // per producer
  uint64_t runs = 3;
  ProxyPlacement placement;
  Progress* progress = nullptr;  // told of every finished size of every run and path
};

uint64_t region_stride(uint64_t max_size) { return (max_size + 4095) / 4096 * 4096; }

uint64_t messages_per_producer(const GoodputOptions& o, uint64_t size, uint32_t producers) {
  const uint64_t by_bytes = o.bytes / (size * producers);
  const uint64_t cap = o.max_messages / producers;
  return std::max(o.min_messages, std::min(by_bytes, cap));
}

uint8_t pattern_byte(uint64_t seed, uint64_t i) {
  uint64_t x = (seed + 1) * 0x9E3779B97F4A7C15ull + i * 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return static_cast<uint8_t>(x ^ (x >> 8));
}

void fill(uint8_t* source, uint8_t* destination, uint64_t size, uint64_t seed) {
  for (uint64_t i = 0; i < size; ++i) source[i] = pattern_byte(seed, i);
  std::memset(destination, 0, size);
}

uint64_t seed_of(uint32_t path, uint64_t size, uint64_t run, uint32_t producer) {
  return ((path * 64 + run) * 1024 + producer) * 0x100000001ull + size;
}

// --- mini-proxy ------------------------------------------------------------------------------

template <typename Handoff>
void proxy_producer(ProxyBenchRig& rig, uint32_t ring_number, uint64_t offset, uint64_t size, uint64_t count,
                    const std::atomic<bool>& go, std::atomic<bool>* ok) {
  try {
    while (!go.load(std::memory_order_acquire)) spin_pause();
    const proxy::RingHandle ring = rig.proxy->ring(ring_number);
    const proxy::Request request{proxy::Operation::write, 0, static_cast<uint32_t>(size),
                                 static_cast<uint32_t>(offset), offset};
    uint64_t index = 0;
    for (uint64_t m = 0; m < count; ++m) index = enqueue_or_throw<Handoff>(ring, request);
    check(proxy::wait_completion(ring, index), "completion");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    *ok = false;
  }
}

std::string size_text(uint64_t size) {
  if (size >= kMiB && size % kMiB == 0) return std::to_string(size / kMiB) + " MiB";
  if (size >= 1024 && size % 1024 == 0) return std::to_string(size / 1024) + " KiB";
  return std::to_string(size) + " B";
}

// Goodput (GB/s) per size, one run; *valid cleared on a payload mismatch.
template <typename Handoff>
std::vector<double> proxy_run(const GoodputOptions& o, uint64_t run, bool* valid,
                              std::vector<proxy::CpuClockState>* clocks, std::string* placement) {
  proxy::ProxyConfig config;
  config.workers = o.workers;
  config.rings = o.workers;
  config.batch = o.batch;
  config.ring_entries = o.ring_entries;
  config.handoff = o.handoff;
  const uint64_t stride = region_stride(*std::max_element(o.sizes.begin(), o.sizes.end()));
  ProxyBenchRig rig(config, o.placement, stride * o.workers / 8);
  rig.proxy->start();
  uint8_t* a = reinterpret_cast<uint8_t*>(rig.a.data());
  uint8_t* b = reinterpret_cast<uint8_t*>(rig.b.data());
  std::vector<double> goodput;
  for (const uint64_t size : o.sizes) {
    for (uint32_t p = 0; p < o.workers; ++p) fill(a + p * stride, b + p * stride, size, seed_of(0, size, run, p));
    const uint64_t count = messages_per_producer(o, size, o.workers);
    std::atomic<bool> go{false}, ok{true};
    std::vector<std::thread> producers;
    for (uint32_t p = 0; p < o.workers; ++p) {
      producers.emplace_back(proxy_producer<Handoff>, std::ref(rig), p, p * stride, size, count, std::cref(go), &ok);
    }
    const uint64_t t0 = now_ns();
    go.store(true, std::memory_order_release);
    for (auto& t : producers) t.join();
    const uint64_t t1 = now_ns();
    bool v = ok.load();
    for (uint32_t p = 0; p < o.workers && v; ++p) v = std::memcmp(a + p * stride, b + p * stride, size) == 0;
    if (!v) std::fprintf(stderr, "goodput: mini-proxy payload mismatch at %llu B\n", static_cast<unsigned long long>(size));
    *valid &= v;
    goodput.push_back(double(size) * count * o.workers / double(t1 - t0));  // bytes per ns = GB/s
    if (o.progress) o.progress->done("mini-proxy " + size_text(size) + ", run " + std::to_string(run + 1));
  }
  *clocks = rig.worker_clocks();
  *placement = rig.placement();
  return goodput;
}

// --- mini-gda --------------------------------------------------------------------------------

struct GdaFabric : LoopbackFabric {
  GdaFabric(uint32_t threads, uint64_t bytes_per_thread)
      : LoopbackFabric(threads, threads * bytes_per_thread / 8) {}
};

gda::Status gda_submit(GdaFabric& f, const GoodputOptions& o, uint32_t thread, uint64_t offset, uint64_t size,
                       uint64_t count, const std::atomic<bool>& go) {
  const nic::QpHandle qp = f.senders[thread]->handle();
  const gda::WriteRequest one{reinterpret_cast<uintptr_t>(f.source.data()) + offset, f.source_region.lkey,
                              static_cast<uint32_t>(size), reinterpret_cast<uintptr_t>(f.destination.data()) + offset,
                              f.destination_region.rkey};
  std::vector<gda::WriteRequest> batch(o.batch, one);
  while (!go.load(std::memory_order_acquire)) spin_pause();
  uint64_t end = 0;
  for (uint64_t sent = 0; sent < count;) {
    const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(o.batch, count - sent));
    gda::Status s = gda::post_writes<GdaPolicy, gda::Sharing::exclusive>(qp, batch.data(), n, &end);
    if (s != gda::Status::ok) return s;
    sent += n;
    if (end > o.window) {
      s = gda::wait_completion<GdaPolicy, gda::Sharing::exclusive>(qp, end - o.window);
      if (s != gda::Status::ok) return s;
    }
  }
  return gda::wait_completion<GdaPolicy, gda::Sharing::exclusive>(qp, end);
}

std::vector<double> gda_run(const GoodputOptions& o, uint64_t run, bool* valid) {
  const uint64_t stride = region_stride(*std::max_element(o.sizes.begin(), o.sizes.end()));
  GdaFabric f(o.gda_threads, stride);
  uint8_t* a = reinterpret_cast<uint8_t*>(f.source.data());
  uint8_t* b = reinterpret_cast<uint8_t*>(f.destination.data());
  std::vector<double> goodput;
  for (const uint64_t size : o.sizes) {
    for (uint32_t t = 0; t < o.gda_threads; ++t) fill(a + t * stride, b + t * stride, size, seed_of(1, size, run, t));
    const uint64_t count = messages_per_producer(o, size, o.gda_threads);
    std::atomic<bool> go{false};
    std::vector<gda::Status> status(o.gda_threads, gda::Status::ok);
    std::vector<std::thread> submitters;
    for (uint32_t t = 0; t < o.gda_threads; ++t) {
      submitters.emplace_back([&, t] { status[t] = gda_submit(f, o, t, t * stride, size, count, go); });
    }
    const uint64_t t0 = now_ns();
    go.store(true, std::memory_order_release);
    for (auto& s : submitters) s.join();
    const uint64_t t1 = now_ns();
    bool v = true;
    for (uint32_t t = 0; t < o.gda_threads; ++t) {
      if (status[t] != gda::Status::ok) {
        throw Error("goodput: mini-gda submitter " + std::to_string(t) + " failed: " + gda::to_string(status[t]));
      }
      v &= std::memcmp(a + t * stride, b + t * stride, size) == 0;
    }
    if (!v) std::fprintf(stderr, "goodput: mini-gda payload mismatch at %llu B\n", static_cast<unsigned long long>(size));
    *valid &= v;
    goodput.push_back(double(size) * count * o.gda_threads / double(t1 - t0));
    if (o.progress) o.progress->done("mini-gda " + size_text(size) + ", run " + std::to_string(run + 1));
  }
  return goodput;
}

// --- the subcommand --------------------------------------------------------------------------

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// parse: the flags into GoodputOptions (`cores`: --cores as given, for the rows' pinning knob).
GoodputOptions parse_goodput(const Arguments& arguments, std::string* cores_given) {
  arguments.provider({"softnic"});
  const bool quick = arguments.flag("quick", "256 MiB per size and path, at most 200,000 messages, one run");
  GoodputOptions o;
  o.sizes = arguments.sizes(o.sizes, 1, 64 * kMiB, "payload of one request or write");
  o.workers = static_cast<uint32_t>(arguments.integer("workers", 4, 1, 64, "mini-proxy workers T (R = T rings, one producer each)"));
  o.batch = static_cast<uint32_t>(arguments.integer("batch", 16, 1, 64,
                                                             "requests per post and writes per doorbell (the paper's B), both paths"));
  o.gda_threads = static_cast<uint32_t>(arguments.integer("gda-threads", o.workers, 1, 64,
                                                                   "mini-gda submitters G, one QP each (default: --workers)"));
  o.window = static_cast<uint32_t>(arguments.integer("window", 256, 1, 1024,
                                                              "mini-gda: WQEs a submitter keeps in flight (at least --batch)"));
  if (o.window < o.batch) {
    // It was raised to the batch silently: a run must measure the window it was given.
    throw InvalidArgument("--window = " + std::to_string(o.window) + " is smaller than --batch = " +
                          std::to_string(o.batch) + ": a window holds at least one batch");
  }
  o.ring_entries = read_ring_entries(arguments);
  o.handoff = read_handoff(arguments);
  o.bytes = arguments.integer("bytes", quick ? 256 * kMiB : 1024 * kMiB, 1, 1ull << 40,
                              "payload bytes per size, run and path, all producers together (within the message bounds)");
  o.max_messages = arguments.integer("max-messages", quick ? 200000 : 1000000, 1, 1'000'000'000,
                                     "most messages per size, run and path, all producers together (caps the small sizes)");
  o.min_messages = arguments.integer("min-messages", quick ? 16 : 64, 1, 1'000'000'000,
                                     "fewest messages per producer, size and run (keeps the large sizes measurable)");
  o.runs = arguments.integer("runs", quick ? 1 : 3, 1, 100, flag_help::RUNS);
  const std::string cores = read_cores(arguments, o.placement);
  arguments.check_all_used();
  *cores_given = cores;
  return o;
}

// What the runs measured: each size's goodput per run on both paths, and the proxy's CPU side.
struct GoodputRuns {
  std::vector<std::vector<double>> proxy_gb, gda_gb;  // [size][run]
  bool proxy_valid = true, gda_valid = true;
  std::vector<proxy::CpuClockState> clocks;
  std::string placement;
};

// run: `o.runs` runs of every size, mini-proxy then mini-gda each run.
GoodputRuns measure_goodput(const GoodputOptions& o) {
  const size_t n = o.sizes.size();
  GoodputRuns m;
  m.proxy_gb.resize(n);
  m.gda_gb.resize(n);
  for (uint64_t run = 0; run < o.runs; ++run) {
    const std::vector<double> p = o.handoff == proxy::Handoff::tuned
                                      ? proxy_run<proxy::tuned>(o, run, &m.proxy_valid, &m.clocks, &m.placement)
                                      : proxy_run<proxy::baseline>(o, run, &m.proxy_valid, &m.clocks, &m.placement);
    const std::vector<double> g = gda_run(o, run, &m.gda_valid);
    for (size_t i = 0; i < n; ++i) m.proxy_gb[i].push_back(p[i]), m.gda_gb[i].push_back(g[i]);
  }
  return m;
}

// assemble: a row per path and size, each with the reference and the first size at 90 % of it.
void assemble_goodput(const GoodputOptions& o, const std::string& cores, const GoodputRuns& m,
                      Report& report) {
  const size_t n = o.sizes.size();
  const auto& proxy_gb = m.proxy_gb;
  const auto& gda_gb = m.gda_gb;
  const std::string& placement = m.placement;

  // The reference: mini-gda at 1 MiB (or the largest size swept), median over runs.
  const auto mib = std::find(o.sizes.begin(), o.sizes.end(), kMiB);
  const size_t reference_index = mib != o.sizes.end() ? size_t(mib - o.sizes.begin()) : n - 1;
  const double reference = median(gda_gb[reference_index]);
  const std::string reference_text =
      "mini-gda goodput at " + size_text(o.sizes[reference_index]) +
      ", same run (softnic has no link model)";
  auto first_at_90 = [&](const std::vector<std::vector<double>>& gb) -> std::string {
    for (size_t i = 0; i < n; ++i) {
      if (median(gb[i]) >= 0.9 * reference) return size_text(o.sizes[i]);
    }
    return "not reached";
  };
  const std::string proxy_first = first_at_90(proxy_gb), gda_first = first_at_90(gda_gb);

  char reference_value[64];
  std::snprintf(reference_value, sizeof reference_value, "%.3f GB/s", reference);
  for (int path = 0; path < 2; ++path) {
    const bool is_proxy = path == 0;
    for (size_t i = 0; i < n; ++i) {
      Result r = proxy_result("goodput", std::string(is_proxy ? "mini-proxy " : "mini-gda ") + size_text(o.sizes[i]));
      const uint32_t producers = is_proxy ? o.workers : o.gda_threads;
      r.knobs = {{"path", is_proxy ? "mini-proxy" : "mini-gda"},
                 {"payload bytes", std::to_string(o.sizes[i])},
                 {"messages", std::to_string(messages_per_producer(o, o.sizes[i], producers) * producers)},
                 {"reference", reference_text},
                 {"reference GB/s", reference_value},
                 {"first_size_at_90pct", is_proxy ? proxy_first : gda_first}};
      if (is_proxy) {
        r.knobs.insert(r.knobs.begin() + 2,
                       {{"workers (T)", std::to_string(o.workers)}, {"rings (R)", std::to_string(o.workers)},
                        {"producers", std::to_string(o.workers)}, {"batch (B)", std::to_string(o.batch)},
                        {"handoff", proxy::to_string(o.handoff)}, {"ring_entries", std::to_string(o.ring_entries)},
                        {"pinning", cores.empty() ? placement : "cores " + cores}});
      } else {
        r.submitter = "host-thread (mini-gda, gda::post_writes)";
        r.pe_layout = "1 process, 1 softnic, loopback QP per submitter";
        r.knobs.insert(r.knobs.begin() + 2,
                       {{"submitters", std::to_string(o.gda_threads)}, {"qps", std::to_string(o.gda_threads)},
                        {"batch (WQEs per doorbell)", std::to_string(o.batch)},
                        {"window (WQEs in flight)", std::to_string(o.window)}, {"ordering", GdaPolicy::key}});
      }
      Metric goodput{"goodput", "GB/s", {}};
      for (double v : (is_proxy ? proxy_gb : gda_gb)[i]) goodput.runs.push_back(summarize({v}));
      r.metrics = {goodput};
      r.payload_validated = is_proxy ? m.proxy_valid : m.gda_valid;
      if (is_proxy) add_clock_environment(m.clocks, "", &r.environment);
      report.add(r);
    }
  }
  std::fprintf(stderr, "goodput: reference %s (%s); first size at 90%%: mini-proxy %s, mini-gda %s\n",
               reference_value, reference_text.c_str(), proxy_first.c_str(), gda_first.c_str());
}

int run_goodput(const Arguments& arguments, Report& report) {
  std::string cores;
  GoodputOptions o = parse_goodput(arguments, &cores);
  Progress progress("goodput", 2 * o.sizes.size() * o.runs);
  o.progress = &progress;
  const GoodputRuns m = measure_goodput(o);
  assemble_goodput(o, cores, m, report);
  if (!m.proxy_valid || !m.gda_valid) throw Error("goodput: payload validation failed (see the rows with payload_validated false)");
  return 0;
}

const bool registered = register_experiment(
    {"goodput",
     "Figure 8: pipelined goodput vs payload, mini-proxy and mini-gda, first size at 90% of the reference (softnic)",
     run_goodput, true});

}  // namespace
}  // namespace dissect::bench
