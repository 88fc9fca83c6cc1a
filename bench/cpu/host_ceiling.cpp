// `dissect host-nic-ceiling`: the softnic host engine's message rate on pre-built 8 B writes, by
// engine threads and QPs (host_ceiling.h), the ceiling beside the rates of the experiments whose
// WQEs host threads execute.
#include "host_ceiling.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "dissect/bench/experiment.h"
#include "dissect/bench/flag_help.h"
#include "dissect/bench/progress.h"
#include "dissect/common/clock.h"
#include "dissect/common/error.h"
#include "dissect/gda/gda.h"
#include "dissect/softnic/softnic.h"

namespace dissect::bench {
namespace {

using Policy = gda::ordering::system_release_store;
constexpr uint32_t kBatch = 16;

// One NIC, `qps` connected loopback pairs, a source word and `depth` destination words per QP.
struct CeilingRig {
  std::unique_ptr<softnic::SoftNic> nic;
  std::unique_ptr<nic::ProtectionDomain> pd;
  std::vector<std::unique_ptr<nic::QueuePair>> requesters, responders;
  std::vector<uint64_t> source, destination;
  nic::MemoryRegion source_mr, destination_mr;

  CeilingRig(uint32_t threads, uint32_t qps, uint32_t depth, const std::string& profile)
      : source(qps), destination(size_t{qps} * depth) {
    softnic::SoftNicOptions o;
    o.engine_threads = threads;
    o.profile = softnic::timing_profile(profile);
    o.start_engine = false;
    nic = std::make_unique<softnic::SoftNic>(o);
    pd = nic->create_pd();
    nic::QpAttributes a;
    a.sq_wqebbs = depth;
    for (uint32_t q = 0; q < qps; ++q) {  // requesters first: QP q is served by thread q % threads
      requesters.push_back(pd->create_qp(a));
    }
    for (uint32_t q = 0; q < qps; ++q) {
      responders.push_back(pd->create_qp(a));
      requesters[q]->connect(responders[q]->endpoint());
      responders[q]->connect(requesters[q]->endpoint());
    }
    source_mr = pd->register_memory(source.data(), source.size() * 8, nic::ACCESS_ALL);
    destination_mr = pd->register_memory(destination.data(), destination.size() * 8, nic::ACCESS_ALL);
  }
};

// Posts `depth` writes on every QP (the engine stopped), then times the engine draining them.
double one_round(CeilingRig& rig, uint32_t depth, uint64_t round, bool* valid) {
  const uint32_t qps = static_cast<uint32_t>(rig.requesters.size());
  std::fill(rig.destination.begin(), rig.destination.end(), 0);
  for (uint32_t q = 0; q < qps; ++q) {
    rig.source[q] = round * qps + q + 1;
    const nic::QpHandle qp = rig.requesters[q]->handle();
    gda::WriteRequest batch[kBatch];
    uint64_t end = 0;
    for (uint32_t k = 0; k < depth; k += kBatch) {
      for (uint32_t i = 0; i < kBatch; ++i) {
        const uint64_t word = uint64_t{q} * depth + k + i;
        batch[i] = {reinterpret_cast<uintptr_t>(&rig.source[q]), rig.source_mr.lkey, 8,
                    reinterpret_cast<uintptr_t>(&rig.destination[word]), rig.destination_mr.rkey};
      }
      if (gda::post_writes<Policy, gda::Sharing::exclusive>(qp, batch, kBatch, &end) != gda::Status::ok) {
        throw Error("host-nic-ceiling: posting on QP " + hex(qp.qpn) + " failed");
      }
    }
  }
  const uint64_t began = now_ns();
  rig.nic->start();
  for (uint32_t q = 0; q < qps; ++q) {
    const nic::QpHandle qp = rig.requesters[q]->handle();
    if (gda::quiet<Policy, gda::Sharing::exclusive>(qp) != gda::Status::ok) {
      throw Error("host-nic-ceiling: QP " + hex(qp.qpn) + " did not complete its " + std::to_string(depth) +
                  " writes");
    }
  }
  const double seconds = double(now_ns() - began) / 1e9;
  rig.nic->stop();
  for (uint32_t q = 0; q < qps; ++q) {
    for (uint32_t k = 0; k < depth; ++k) *valid &= rig.destination[size_t{q} * depth + k] == rig.source[q];
  }
  return double(qps) * depth / seconds / 1e6;
}

}  // namespace

HostCeilingPoint measure_host_engine_ceiling(uint32_t engine_threads, uint32_t qps, uint32_t depth,
                                             uint32_t rounds, const std::string& nic_profile) {
  if (depth % kBatch != 0) {
    throw InvalidArgument("host-nic-ceiling: depth " + std::to_string(depth) + " is not a multiple of " +
                          std::to_string(kBatch));
  }
  CeilingRig rig(engine_threads, qps, depth, nic_profile);
  HostCeilingPoint p;
  p.validated = true;
  std::vector<double> rates;
  for (uint32_t r = 0; r < rounds; ++r) rates.push_back(one_round(rig, depth, r, &p.validated));
  std::sort(rates.begin(), rates.end());
  p.mmsgs = rates[rates.size() / 2];
  return p;
}

double host_engine_ceiling(uint32_t engine_threads, uint32_t qps, const std::string& nic_profile) {
  static std::mutex lock;
  static std::map<std::tuple<uint32_t, uint32_t, std::string>, double> measured;
  std::lock_guard<std::mutex> guard(lock);
  const auto key = std::make_tuple(engine_threads, qps, nic_profile);
  auto it = measured.find(key);
  if (it == measured.end()) {
    it = measured.emplace(key, measure_host_engine_ceiling(engine_threads, qps, 16384, 5, nic_profile).mmsgs).first;
  }
  return it->second;
}

namespace {

int run_host_ceiling(const Arguments& a, Report& report) {
  a.provider({"softnic"});
  const bool quick = a.flag("quick", "depth 1024 and 3 rounds instead of 4096 and 9");
  const std::vector<uint64_t> threads =
      a.integers("engine-threads", {1, 4}, 1, 64, "host threads of the softnic engine (the sweep's first axis)");
  const std::vector<uint64_t> qps = a.integers("qps", {1, 4, 16}, 1, 512, "loopback QPs the writes are spread over");
  const uint32_t depth = static_cast<uint32_t>(
      a.power_of_two("depth", quick ? 1024 : 4096, 32768, "pre-built 8 B writes per QP and round (16 per doorbell)"));
  const uint32_t rounds = static_cast<uint32_t>(
      a.integer("rounds", quick ? 3 : 9, 1, 1000, "timed rounds per run; the run's value is their median"));
  const uint32_t runs = static_cast<uint32_t>(a.integer("runs", quick ? 1 : 3, 1, 100, flag_help::RUNS));
  const std::string profile = a.text("nic-profile", "fast", flag_help::NIC_PROFILE);
  softnic::timing_profile(profile);  // refused here, by name, before anything runs
  a.check_all_used();
  Progress progress("host-nic-ceiling", threads.size() * qps.size());
  for (uint64_t t : threads) {
    for (uint64_t q : qps) {
      Result r;
      r.experiment = "host-nic-ceiling";
      r.label = std::to_string(t) + " engine threads, " + std::to_string(q) + " QPs";
      r.engine = "host-thread";
      r.placement = "host";
      r.submitter = "host-thread (pre-built, engine stopped while posting)";
      r.knobs = {{"engine_threads", std::to_string(t)}, {"qps", std::to_string(q)},
                 {"depth", std::to_string(depth)}, {"batch", std::to_string(kBatch)},
                 {"bytes", "8"}, {"nic_profile", profile}};
      Metric rate{"message rate", "Mmsg/s", {}};
      bool valid = true;
      for (uint32_t run = 0; run < runs; ++run) {
        const HostCeilingPoint p = measure_host_engine_ceiling(static_cast<uint32_t>(t), static_cast<uint32_t>(q),
                                                               depth, rounds, profile);
        rate.runs.push_back(summarize({p.mmsgs}));
        valid &= p.validated;
      }
      r.metrics = {rate};
      r.payload_validated = valid;
      progress.done(r.label);
      report.add(std::move(r));
    }
  }
  return 0;
}

const bool registered = register_experiment(
    {"host-nic-ceiling",
     "the softnic host engine's own message rate on pre-built 8 B writes, by engine threads and QPs "
     "(the ceiling beside the proxy paths' rates)",
     run_host_ceiling, true});

}  // namespace
}  // namespace dissect::bench
