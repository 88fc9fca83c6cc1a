// `dissect rate`: pipelined 8 B message rate through mini-gda (paper §4.3.1), with host threads as
// submitters and the softnic host engine as the NIC.
//
// Each submitter owns one QP (or, with --shared, all submitters share one QP) and posts batches of
// `--batch` WQEs per doorbell, only the last signalled, keeping at most `--window` WQEs in flight
// before it waits for completions. The rate is WQEs completed per second over the timed interval;
// the payload of the last batch of every submitter is checked after the run.
#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dissect/bench/experiment.h"
#include "dissect/bench/loopback_fabric.h"
#include "dissect/common/clock.h"
#include "dissect/common/error.h"
#include "dissect/gda/gda.h"
#include "dissect/softnic/softnic.h"

namespace dissect::bench {
namespace {

using Policy = gda::ordering::system_release_store;

struct RateConfig {
  uint64_t threads, batch, window, messages, runs, size;
  bool shared;
};

struct Fabric : LoopbackFabric {
  explicit Fabric(const RateConfig& c) : LoopbackFabric(c.shared ? 1 : c.threads, c.threads * 64) {}
};

template <gda::Sharing S>
gda::Status submit(Fabric& f, const RateConfig& c, uint64_t thread, std::atomic<bool>* go) {
  const nic::QpHandle qp = f.senders[c.shared ? 0 : thread]->handle();
  std::vector<gda::WriteRequest> batch(c.batch);
  for (uint64_t k = 0; k < c.batch; ++k) {
    batch[k] = {reinterpret_cast<uintptr_t>(&f.source[thread * 64]), f.source_region.lkey,
                static_cast<uint32_t>(c.size),
                reinterpret_cast<uintptr_t>(&f.destination[thread * 64]), f.destination_region.rkey};
  }
  while (!go->load(std::memory_order_acquire)) {
  }
  uint64_t end = 0;
  for (uint64_t sent = 0; sent < c.messages; sent += c.batch) {
    f.source[thread * 64] = sent + 1;  // the value the last batch leaves behind
    gda::Status s = gda::post_writes<Policy, S>(qp, batch.data(), static_cast<uint32_t>(c.batch), &end);
    if (s != gda::Status::ok) return s;
    if (end > c.window) {
      s = gda::wait_completion<Policy, S>(qp, end - c.window);
      if (s != gda::Status::ok) return s;
    }
  }
  return gda::wait_completion<Policy, S>(qp, end);
}

// One run: returns M msg/s; *valid is cleared if a submitter's last payload did not land.
double run_once(const RateConfig& c, bool* valid) {
  Fabric fabric(c);
  std::atomic<bool> go{false};
  std::vector<gda::Status> status(c.threads, gda::Status::ok);
  std::vector<std::thread> submitters;
  for (uint64_t t = 0; t < c.threads; ++t) {
    submitters.emplace_back([&, t] {
      status[t] = c.shared ? submit<gda::Sharing::shared>(fabric, c, t, &go)
                           : submit<gda::Sharing::exclusive>(fabric, c, t, &go);
    });
  }
  const uint64_t began = now_ns();
  go.store(true, std::memory_order_release);
  for (auto& s : submitters) s.join();
  const double seconds = (now_ns() - began) / 1e9;
  for (uint64_t t = 0; t < c.threads; ++t) {
    if (status[t] != gda::Status::ok) {
      throw Error("rate: submitter " + std::to_string(t) + " failed: " + gda::to_string(status[t]));
    }
    const uint64_t last_batch_start = ((c.messages - 1) / c.batch) * c.batch;
    *valid &= fabric.destination[t * 64] == last_batch_start + 1;
  }
  return static_cast<double>(c.threads * c.messages) / seconds / 1e6;
}

Result measure(const RateConfig& c) {
  Result r;
  r.experiment = "rate";
  r.label = std::to_string(c.threads) + (c.shared ? " threads, 1 shared QP" : " threads, own QPs") +
            ", batch " + std::to_string(c.batch);
  r.engine = softnic::to_string(softnic::EngineKind::host_thread);
  r.placement = "host";
  r.submitter = "host-thread";
  r.pe_layout = "2 PEs, 1 process, 1 softnic";
  r.knobs = {{"ordering", Policy::key},          {"threads", std::to_string(c.threads)},
             {"qps", c.shared ? "1" : std::to_string(c.threads)},
             {"batch", std::to_string(c.batch)}, {"window", std::to_string(c.window)},
             {"bytes", std::to_string(c.size)},  {"messages_per_thread", std::to_string(c.messages)}};
  Metric rate{"message rate", "Mmsg/s", {}};
  bool valid = true;
  for (uint64_t run = 0; run < c.runs; ++run) rate.runs.push_back(summarize({run_once(c, &valid)}));
  r.metrics = {rate};
  r.payload_validated = valid;
  return r;
}

int run_rate(const Arguments& arguments, Report& report) {
  arguments.provider({"softnic"});
  const bool quick = arguments.flag("quick");
  RateConfig c;
  c.threads = arguments.integer("threads", 1, 1, 64);
  c.batch = arguments.integer("batch", 0, 0, 256);
  c.window = arguments.integer("window", 256, 1, 1024);
  c.messages = arguments.integer("messages", quick ? 20000 : 200000, 1, 1ull << 32);
  c.runs = arguments.integer("runs", 3, 1, 100);
  c.size = arguments.integer("size", 8, 1, 64 * 8);
  c.shared = arguments.flag("shared");
  arguments.check_all_used();
  // Without --batch the report sweeps batch 1 and 16, as Figure 3b and Figure 7 do.
  const std::vector<uint64_t> batches = c.batch ? std::vector<uint64_t>{c.batch}
                                                : std::vector<uint64_t>{1, 16};
  for (uint64_t batch : batches) {
    RateConfig one = c;
    one.batch = batch;
    one.window = std::max(c.window, batch);
    one.messages = (c.messages + batch - 1) / batch * batch;
    Result r = measure(one);
    const bool valid = r.payload_validated;
    report.add(r);
    if (!valid) throw Error("rate: payload validation failed for " + report.results().back().label);
  }
  return 0;
}

const bool registered = register_experiment(
    {"rate", "pipelined 8 B message rate, N WQEs per doorbell (host submitters)", run_rate, true});

}  // namespace
}  // namespace dissect::bench
