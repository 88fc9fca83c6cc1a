// `dissect rate`: pipelined 8 B message rate through mini-gda (paper §4.3.1), with host threads as
// submitters and, as the NIC, the softnic host engine or (--provider mlx5) a ConnectX on each of
// two ranks (fabric.h): rank 0's threads submit, rank 1 is the passive target.
//
// Each submitter owns one QP (or, with --shared, all submitters share one QP) and posts batches of
// `--batch` WQEs per doorbell, only the last signalled, keeping at most `--window` WQEs in flight
// before it waits for completions. The rate is WQEs completed per second over the timed interval;
// the payload of the last batch of every submitter is checked after the run, on the rank it landed.
// `--sizes 8,64,512` (or `-b 8 -e 512 -f 2`) runs every size; each row's label then ends in it.
#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dissect/bench/experiment.h"
#include "dissect/bench/progress.h"
#include "dissect/bench/fabric.h"
#include "dissect/common/clock.h"
#include "dissect/common/error.h"
#include "dissect/gda/gda.h"
#include "dissect/softnic/softnic.h"

namespace dissect::bench {
namespace {

using Policy = gda::counted<gda::ordering::system_release_store>;  // telemetry counts its posts

struct RateConfig {
  uint64_t threads, batch, window, messages, runs, size;
  bool shared;
};

// Each submitter's slice of both buffers: 64 words, its first word the payload checked at the end.
constexpr size_t kSliceWords = 64;

FabricConfig fabric_config(const RateConfig& c) {
  return FabricConfig{static_cast<uint32_t>(c.shared ? 1 : c.threads), c.threads * kSliceWords,
                      1024};
}

template <gda::Sharing S>
gda::Status submit(FabricSide& me, const RateConfig& c, uint64_t thread, std::atomic<bool>* go) {
  const nic::QpHandle qp = me.qps[c.shared ? 0 : thread];
  uint64_t* source = me.buffer + thread * kSliceWords;
  std::vector<gda::WriteRequest> batch(c.batch);
  for (uint64_t k = 0; k < c.batch; ++k) {
    batch[k] = {reinterpret_cast<uintptr_t>(source), me.lkey, static_cast<uint32_t>(c.size),
                me.peer.address + thread * kSliceWords * 8, me.peer.rkey};
  }
  while (!go->load(std::memory_order_acquire)) {
  }
  uint64_t end = 0;
  for (uint64_t sent = 0; sent < c.messages; sent += c.batch) {
    source[0] = sent + 1;  // the value the last batch leaves behind
    gda::Status s = gda::post_writes<Policy, S>(qp, batch.data(), static_cast<uint32_t>(c.batch), &end);
    if (s != gda::Status::ok) return s;
    if (end > c.window) {
      s = gda::wait_completion<Policy, S>(qp, end - c.window);
      if (s != gda::Status::ok) return s;
    }
  }
  return gda::wait_completion<Policy, S>(qp, end);
}

// PE 0's submitters, timed from the start signal to the last completion; returns M msg/s.
double submit_all(FabricSide& me, const RateConfig& c) {
  std::atomic<bool> go{false};
  std::vector<gda::Status> status(c.threads, gda::Status::ok);
  std::vector<std::thread> submitters;
  for (uint64_t t = 0; t < c.threads; ++t) {
    submitters.emplace_back([&, t] {
      status[t] = c.shared ? submit<gda::Sharing::shared>(me, c, t, &go)
                           : submit<gda::Sharing::exclusive>(me, c, t, &go);
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
  }
  return static_cast<double>(c.threads * c.messages) / seconds / 1e6;
}

// One run: returns M msg/s (0 on the target rank); *valid is cleared if a submitter's last payload
// did not land in PE 1's buffer. `label` (run 0 only) receives the fabric's labels.
double run_once(FabricSession& session, const RateConfig& c, bool* valid, Result* label) {
  const std::unique_ptr<Fabric> fabric = session.connect(fabric_config(c));
  if (label) fabric->label(*label);
  const double rate = fabric->drives(0) ? submit_all(fabric->side(0), c) : 0;
  fabric->barrier();
  const uint64_t last_batch_start = ((c.messages - 1) / c.batch) * c.batch;
  for (uint64_t t = 0; t < c.threads; ++t) {
    *valid &= fabric->read_word(1, t * kSliceWords) == last_batch_start + 1;
  }
  return rate;
}

Result measure(FabricSession& session, const RateConfig& c) {
  Result r;
  r.experiment = "rate";
  r.label = std::to_string(c.threads) + (c.shared ? " threads, 1 shared QP" : " threads, own QPs") +
            ", batch " + std::to_string(c.batch);
  r.placement = "host";
  r.submitter = "host-thread";
  r.knobs = {{"ordering", Policy::key},          {"threads", std::to_string(c.threads)},
             {"qps", c.shared ? "1" : std::to_string(c.threads)},
             {"batch", std::to_string(c.batch)}, {"window", std::to_string(c.window)},
             {"bytes", std::to_string(c.size)},  {"messages_per_thread", std::to_string(c.messages)}};
  Metric rate{"message rate", "Mmsg/s", {}};
  bool valid = true;
  for (uint64_t run = 0; run < c.runs; ++run) {
    rate.runs.push_back(summarize({run_once(session, c, &valid, run == 0 ? &r : nullptr)}));
  }
  r.metrics = {rate};
  r.payload_validated = valid;
  return r;
}

int run_rate(const Arguments& arguments, Report& report) {
  const FabricSessionBuilder fabric(arguments.provider({"softnic", "mlx5"}), arguments);
  const bool quick = arguments.flag("quick", "20,000 messages per submitter and run instead of 200,000");
  RateConfig c;
  c.threads = arguments.integer("threads", 1, 1, 64, "submitter threads, one QP each (unless --shared)");
  c.batch = arguments.integer("batch", 0, 0, 256,
                              "WQEs per doorbell, only the last signalled (the paper's batch); "
                              "0: batch 1 and 16, as Figures 3b and 7");
  c.window = arguments.integer("window", 256, 1, 1024,
                               "WQEs a submitter keeps in flight before it waits for completions");
  c.messages = arguments.integer("messages", quick ? 20000 : 200000, 1, 1ull << 32,
                                 "messages (WQEs) per submitter and run");
  c.runs = arguments.integer("runs", 3, 1, 100, "independent runs, each on a fresh fabric; "
                                                "the table shows the median of their p50s and the spread");
  const uint64_t size = arguments.integer("size", 8, 1, 64 * 8,  // one size: --sizes N
                                          "payload of each write, bytes (one size; --sizes for a sweep)");
  const std::vector<uint64_t> sizes = arguments.sizes({size}, 1, 64 * 8, "payload of each write");
  c.shared = arguments.flag("shared", "every submitter posts to one shared QP (gda::Sharing::shared) "
                                      "instead of one QP each");
  arguments.check_all_used();
  const std::unique_ptr<FabricSession> session = fabric.open();
  // Without --batch the report sweeps batch 1 and 16, as Figure 3b and Figure 7 do.
  const std::vector<uint64_t> batches = c.batch ? std::vector<uint64_t>{c.batch}
                                                : std::vector<uint64_t>{1, 16};
  Progress progress("rate", sizes.size() * batches.size());
  for (uint64_t s : sizes) {
    for (uint64_t batch : batches) {
      RateConfig one = c;
      one.size = s;
      one.batch = batch;
      one.window = std::max(c.window, batch);
      one.messages = (c.messages + batch - 1) / batch * batch;
      Result r = measure(*session, one);
      if (sizes.size() > 1) r.label += ", " + std::to_string(s) + " B";  // one row per size
      progress.done(r.label);
      const bool valid = r.payload_validated;
      report.add(r);
      if (!valid) throw Error("rate: payload validation failed for " + report.results().back().label);
    }
  }
  if (!session->measures()) report.set_served(session->served_line("rate"));
  return 0;
}

const bool registered = register_experiment(
    {"rate", "pipelined 8 B message rate, N WQEs per doorbell (host submitters)", run_rate, true});

}  // namespace
}  // namespace dissect::bench
