// Many producers on every ring, each op checked exactly once and in order per producer.
//
// Every op is an 8-byte FETCH_ADD of 1 on its producer's own counter, with the old value returned
// into the producer's result slot for that op: the k-th op of a producer executes k-th of its ops
// exactly when it returns k. At the end: a counter below the producer's op count means ops were
// lost, above it duplicated; a result slot not holding its index means reordered (or lost /
// duplicated, which the counter has then already said).
//   - sq:    mini-gda QPs shared by several host threads (Sharing::shared: reserve, publish in
//            reservation order, shared doorbells) against the host softnic engine; fetch_add is
//            signalled, so every op is also a CQE on the shared send CQ, drained by racing pollers.
//   - proxy: host producers enqueue descriptors into proxy rings (baseline and tuned handoff, one
//            producer per ring and several sharing one), workers turn them into WQEs.
//
//   ring_stress [--ops N]   N ops in all, split over the configurations (default 10^7)
#include <atomic>
#include <functional>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "dissect/gda/gda.h"
#include "dissect/proxy/handoff.h"
#include "proxy_rig.h"
#include "support/loopback.h"

namespace gda = dissect::gda;
namespace proxy = dissect::proxy;
namespace nic = dissect::nic;
using dissect::testing::Loopback;
using dissect::testing::ProxyRig;

namespace {

struct Tally {
  uint64_t ops = 0, lost = 0, duplicated = 0, reordered = 0, failed_producers = 0;
  void add(const Tally& o) {
    ops += o.ops, lost += o.lost, duplicated += o.duplicated, reordered += o.reordered;
    failed_producers += o.failed_producers;
  }
};

// Checks producer p's counter and its results[0..n).
void check_producer(uint64_t counter, const uint64_t* results, uint64_t n, Tally& t) {
  t.ops += n;
  if (counter < n) t.lost += n - counter;
  if (counter > n) t.duplicated += counter - n;
  for (uint64_t k = 0; k < n; ++k) t.reordered += results[k] != k;
}

void print(const char* what, const Tally& t, double seconds) {
  std::printf("%-44s ops %10" PRIu64 "  lost %" PRIu64 "  duplicated %" PRIu64 "  reordered %" PRIu64
              "  failed producers %" PRIu64 "  (%.1f s, %.2f Mops/s)\n",
              what, t.ops, t.lost, t.duplicated, t.reordered, t.failed_producers, seconds,
              t.ops / seconds / 1e6);
}

using Policy = gda::ordering::gpu_release_store;

// `qps` shared QPs on one softnic, `threads_per_qp` producers each.
Tally stress_sq(uint32_t qps, uint32_t threads_per_qp, uint64_t ops, uint32_t sq_wqebbs) {
  const uint32_t producers = qps * threads_per_qp;
  const uint64_t per = ops / producers;
  nic::QpAttributes attributes;
  attributes.sq_wqebbs = sq_wqebbs;
  // source: results (per producer, per op); destination: one counter per producer.
  Loopback lb(attributes, 64);
  std::vector<uint64_t> results(producers * per, ~0ull);
  std::vector<uint64_t> counters(producers, 0);
  auto results_mr = lb.pd->register_memory(results.data(), results.size() * 8, nic::ACCESS_ALL);
  auto counters_mr = lb.pd->register_memory(counters.data(), counters.size() * 8, nic::ACCESS_ALL);
  std::vector<std::unique_ptr<nic::QueuePair>> requesters, responders;
  std::vector<nic::QpHandle> handles;
  for (uint32_t q = 0; q < qps; ++q) {
    requesters.push_back(lb.pd->create_qp(attributes));
    responders.push_back(lb.pd->create_qp(attributes));
    requesters.back()->connect(responders.back()->endpoint());
    responders.back()->connect(requesters.back()->endpoint());
    handles.push_back(requesters.back()->handle());
  }
  std::vector<int> failed(producers, 0);
  std::vector<std::thread> threads;
  for (uint32_t p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      const nic::QpHandle& qp = handles[p % qps];
      uint64_t end = 0;
      for (uint64_t k = 0; k < per; ++k) {
        gda::FetchAddRequest r{reinterpret_cast<uintptr_t>(&counters[p]), counters_mr.rkey, 1,
                               reinterpret_cast<uintptr_t>(&results[p * per + k]), results_mr.lkey};
        if (gda::fetch_add<Policy, gda::Sharing::shared>(qp, r, &end) != gda::Status::ok) {
          failed[p] = 1;
          return;
        }
      }
      if (gda::wait_completion<Policy, gda::Sharing::shared>(qp, end, 120'000'000'000ull) != gda::Status::ok) {
        failed[p] = 1;
      }
    });
  }
  for (auto& t : threads) t.join();
  lb.softnic->stop();
  Tally t;
  for (uint32_t p = 0; p < producers; ++p) {
    check_producer(counters[p], &results[p * per], per, t);
    t.failed_producers += failed[p];
  }
  return t;
}

template <typename Handoff, proxy::Sharing S>
proxy::Status produce(const proxy::RingHandle& ring, uint32_t counter_offset, uint32_t result_offset,
                      uint64_t count) {
  uint64_t index = 0;
  for (uint64_t k = 0; k < count; ++k) {
    const proxy::Request r{proxy::Operation::fetch_add, 0, 1, static_cast<uint32_t>(result_offset + k * 8),
                           counter_offset};
    const proxy::Status s = proxy::enqueue<Handoff, S>(ring, r, &index);
    if (s != proxy::Status::ok) return s;
  }
  return count == 0 ? proxy::Status::ok : proxy::wait_completion(ring, index);
}

// `rings` rings over `workers` workers, `sharers` producers per ring.
Tally stress_proxy(proxy::Handoff handoff, uint32_t workers, uint32_t rings, uint32_t sharers,
                   uint32_t batch, uint64_t ops) {
  proxy::ProxyConfig config;
  config.workers = workers;
  config.rings = rings;
  config.batch = batch;
  config.handoff = handoff;
  config.ring_entries = 256;
  config.pin = false;
  config.timeout_ns = 120'000'000'000ull;
  const uint32_t producers = rings * sharers;
  const uint64_t per = ops / producers;
  // source (local): results, per producer per op; destination (remote): a counter per producer.
  ProxyRig rig(config, producers * per * 8 + producers * 8 + 64);
  std::memset(rig.source.data(), 0xff, producers * per * 8);
  rig.proxy->start();
  std::vector<proxy::Status> status(producers, proxy::Status::ok);
  std::vector<std::thread> threads;
  for (uint32_t p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      const proxy::RingHandle ring = rig.proxy->ring(p % rings);
      const uint32_t counter = p * 8;
      const uint32_t result = static_cast<uint32_t>(p * per * 8);
      if (handoff == proxy::Handoff::baseline) {
        status[p] = produce<proxy::baseline, proxy::Sharing::shared>(ring, counter, result, per);
      } else if (sharers > 1) {
        status[p] = produce<proxy::tuned, proxy::Sharing::shared>(ring, counter, result, per);
      } else {
        status[p] = produce<proxy::tuned, proxy::Sharing::exclusive>(ring, counter, result, per);
      }
    });
  }
  for (auto& t : threads) t.join();
  const proxy::ShutdownReport report = rig.proxy->stop(proxy::StopMode::drain);
  rig.softnic->stop();
  Tally t;
  if (!report.drained) std::fprintf(stderr, "proxy did not drain: %s\n", report.describe().c_str());
  const auto* results = reinterpret_cast<const uint64_t*>(rig.source.data());
  const uint64_t* counters = rig.destination_words();
  for (uint32_t p = 0; p < producers; ++p) {
    check_producer(counters[p], results + p * per, per, t);
    t.failed_producers += status[p] != proxy::Status::ok;
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t ops = 10'000'000;
  if (argc == 3 && std::string(argv[1]) == "--ops") {
    char* end = nullptr;
    ops = std::strtoull(argv[2], &end, 10);
    if (end == argv[2] || *end != '\0' || ops == 0) {
      std::fprintf(stderr, "ring_stress: --ops wants a positive decimal number, got '%s'\n", argv[2]);
      return 2;
    }
  } else if (argc != 1) {
    std::fprintf(stderr, "usage: ring_stress [--ops N]\n");
    return 2;
  }
  struct Config {
    std::string name;
    std::function<Tally(uint64_t)> run;
  };
  const std::vector<Config> configs = {
      {"sq: 1 shared QP x 4 threads, 128-WQEBB ring", [](uint64_t n) { return stress_sq(1, 4, n, 128); }},
      {"sq: 4 shared QPs x 4 threads, 256-WQEBB ring", [](uint64_t n) { return stress_sq(4, 4, n, 256); }},
      {"proxy baseline: T=2 R=4, 2 producers/ring, B=4",
       [](uint64_t n) { return stress_proxy(proxy::Handoff::baseline, 2, 4, 2, 4, n); }},
      {"proxy tuned: T=2 R=8, 1 producer/ring, B=16",
       [](uint64_t n) { return stress_proxy(proxy::Handoff::tuned, 2, 8, 1, 16, n); }},
      {"proxy tuned shared: T=1 R=2, 4 producers/ring, B=1",
       [](uint64_t n) { return stress_proxy(proxy::Handoff::tuned, 1, 2, 4, 1, n); }},
  };
  Tally total;
  for (const Config& c : configs) {
    const auto began = std::chrono::steady_clock::now();
    const Tally t = c.run(ops / configs.size());
    print(c.name.c_str(), t, std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count());
    std::fflush(stdout);
    total.add(t);
  }
  std::printf("ring_stress: %" PRIu64 " ops, lost %" PRIu64 ", duplicated %" PRIu64 ", reordered %" PRIu64
              ", failed producers %" PRIu64 "\n",
              total.ops, total.lost, total.duplicated, total.reordered, total.failed_producers);
  return total.lost + total.duplicated + total.reordered + total.failed_producers == 0 ? 0 : 1;
}
