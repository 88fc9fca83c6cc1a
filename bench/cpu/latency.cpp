// `dissect latency`: the cost of one 8 B RDMA write (paper §4.1), with host threads standing in for
// GPU threads and the softnic host-thread engine standing in for the NIC.
//
//   issue           reserve, build the WQE, publish, dbrec + doorbell (completion excluded)
//   put+completion  issue and the wait until its CQE retires it
//   round trip      PE0 writes a word into PE1; PE1, polling that word, writes it back; PE0 sees it
//
// One outstanding operation; `--warmup` operations are discarded; each of `--runs` runs builds a
// fresh softnic and PEs. The payload (the operation's sequence number) is checked after every
// operation, so a lost or stale write fails the run.
#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dissect/bench/experiment.h"
#include "dissect/common/clock.h"
#include "dissect/common/error.h"
#include "dissect/gda/gda.h"
#include "dissect/softnic/softnic.h"

namespace dissect::bench {
namespace {

using Policy = gda::ordering::system_release_store;  // correct for a host-thread engine
constexpr auto kExclusive = gda::Sharing::exclusive;

struct LatencyConfig {
  uint64_t iterations;
  uint64_t warmup;
  uint64_t runs;
  uint64_t size;
  uint64_t sq_depth;
};

// One processing element: its QP towards the peer, and a registered buffer whose first bytes are
// the word the peer writes and whose second half is this PE's source.
struct ProcessingElement {
  std::unique_ptr<nic::QueuePair> qp;
  std::vector<uint64_t> buffer = std::vector<uint64_t>(512);
  nic::MemoryRegion region;
  uint64_t* landing() { return buffer.data(); }
  uint64_t* source() { return buffer.data() + 256; }
};

struct TwoPes {
  std::unique_ptr<softnic::SoftNic> nic = std::make_unique<softnic::SoftNic>();
  std::unique_ptr<nic::ProtectionDomain> pd = nic->create_pd();
  ProcessingElement pe[2];

  explicit TwoPes(uint32_t sq_depth) {
    nic::QpAttributes attributes;
    attributes.sq_wqebbs = sq_depth;
    for (auto& p : pe) {
      p.qp = pd->create_qp(attributes);
      p.region = pd->register_memory(p.buffer.data(), p.buffer.size() * 8, nic::ACCESS_ALL);
    }
    pe[0].qp->connect(pe[1].qp->endpoint());
    pe[1].qp->connect(pe[0].qp->endpoint());
  }
};

// Posts `value` (size bytes, the value in the first 8) from `from` into `to`'s landing word.
gda::Status put_value(ProcessingElement& from, ProcessingElement& to, bool use_inline,
                      uint32_t size, uint64_t value, uint64_t* end) {
  const nic::QpHandle qp = from.qp->handle();
  const uint64_t remote = reinterpret_cast<uintptr_t>(to.landing());
  if (use_inline) {
    uint64_t payload[32] = {};  // --size bytes of it travel inline
    payload[0] = value;
    gda::InlineWriteRequest r{payload, size, remote, to.region.rkey};
    return gda::put_inline<Policy, kExclusive>(qp, r, gda::Completion::signaled, end);
  }
  from.source()[0] = value;
  gda::WriteRequest r{reinterpret_cast<uintptr_t>(from.source()), from.region.lkey, size, remote,
                      to.region.rkey};
  return gda::put<Policy, kExclusive>(qp, r, gda::Completion::signaled, end);
}

void check(gda::Status status, const char* what) {
  if (status != gda::Status::ok) {
    throw Error(std::string("latency: ") + what + " failed: " + gda::to_string(status));
  }
}

uint64_t wait_for_word(uint64_t* word, uint64_t value) {
  const uint64_t began = now_ns();
  while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != value) {
    if (now_ns() - began > DEFAULT_WAIT_TIMEOUT_NS) {
      throw Error("latency: timed out waiting for the data word to become " + std::to_string(value));
    }
  }
  return now_ns();
}

// Issue and put+completion samples of one run, in microseconds; false if a payload was wrong.
bool run_issue(const LatencyConfig& c, bool use_inline, std::vector<double>* issue,
               std::vector<double>* completion) {
  TwoPes pes(static_cast<uint32_t>(c.sq_depth));
  bool valid = true;
  const nic::QpHandle qp = pes.pe[0].qp->handle();
  for (uint64_t i = 0; i < c.warmup + c.iterations; ++i) {
    uint64_t end = 0;
    const uint64_t value = i + 1;
    const uint64_t t0 = now_ns();
    check(put_value(pes.pe[0], pes.pe[1], use_inline, static_cast<uint32_t>(c.size), value, &end),
          "put");
    const uint64_t t1 = now_ns();
    check(gda::wait_completion<Policy, kExclusive>(qp, end), "completion");
    const uint64_t t2 = now_ns();
    valid &= pes.pe[1].landing()[0] == value;
    if (i >= c.warmup) {
      issue->push_back((t1 - t0) / 1e3);
      completion->push_back((t2 - t0) / 1e3);
    }
  }
  return valid;
}

bool run_round_trip(const LatencyConfig& c, bool use_inline, std::vector<double>* round_trip) {
  TwoPes pes(static_cast<uint32_t>(c.sq_depth));
  const uint64_t total = c.warmup + c.iterations;
  std::atomic<bool> responder_ok{true};
  std::thread responder([&] {
    try {
      const nic::QpHandle qp = pes.pe[1].qp->handle();
      for (uint64_t i = 0; i < total; ++i) {
        wait_for_word(pes.pe[1].landing(), i + 1);
        uint64_t end = 0;
        check(put_value(pes.pe[1], pes.pe[0], use_inline, static_cast<uint32_t>(c.size), i + 1,
                        &end), "reply");
        check(gda::wait_completion<Policy, kExclusive>(qp, end), "reply completion");
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
      responder_ok = false;
    }
  });
  const nic::QpHandle qp = pes.pe[0].qp->handle();
  for (uint64_t i = 0; i < total && responder_ok; ++i) {
    uint64_t end = 0;
    const uint64_t t0 = now_ns();
    check(put_value(pes.pe[0], pes.pe[1], use_inline, static_cast<uint32_t>(c.size), i + 1, &end),
          "ping");
    const uint64_t t1 = wait_for_word(pes.pe[0].landing(), i + 1);
    check(gda::wait_completion<Policy, kExclusive>(qp, end), "ping completion");
    if (i >= c.warmup) round_trip->push_back((t1 - t0) / 1e3);
  }
  responder.join();
  return responder_ok;
}

Result measure(const LatencyConfig& c, bool use_inline) {
  Result result;
  result.experiment = "latency";
  result.label = std::string(use_inline ? "inline " : "pointer ") + std::to_string(c.size) + " B";
  result.engine = softnic::to_string(softnic::EngineKind::host_thread);
  result.placement = "host";
  result.submitter = "host-thread";
  result.pe_layout = "2 PEs, 1 process, 1 softnic";
  result.knobs = {{"ordering", Policy::key},      {"payload", use_inline ? "inline" : "pointer"},
                  {"bytes", std::to_string(c.size)}, {"sq_wqebbs", std::to_string(c.sq_depth)},
                  {"outstanding", "1"},           {"iterations", std::to_string(c.iterations)},
                  {"warmup", std::to_string(c.warmup)}};
  Metric issue{"issue", "us", {}}, completion{"put+completion", "us", {}},
      round_trip{"round trip", "us", {}};
  bool valid = true;
  for (uint64_t run = 0; run < c.runs; ++run) {
    std::vector<double> issue_samples, completion_samples, round_trip_samples;
    valid &= run_issue(c, use_inline, &issue_samples, &completion_samples);
    valid &= run_round_trip(c, use_inline, &round_trip_samples);
    issue.runs.push_back(summarize(issue_samples));
    completion.runs.push_back(summarize(completion_samples));
    round_trip.runs.push_back(summarize(round_trip_samples));
  }
  result.metrics = {issue, completion, round_trip};
  result.payload_validated = valid;
  return result;
}

int run_latency(const Arguments& arguments, Report& report) {
  arguments.provider({"softnic"});
  const bool quick = arguments.flag("quick");
  LatencyConfig c;
  c.iterations = arguments.integer("iterations", quick ? 2000 : 20000, 1, 100'000'000);
  c.warmup = arguments.integer("warmup", quick ? 200 : 1000, 0, 100'000'000);
  c.runs = arguments.integer("runs", 3, 1, 100);
  c.size = arguments.integer("size", 8, 8, 220);  // up to the inline limit used by the paper
  c.sq_depth = arguments.power_of_two("sq-depth", 64, mlx5::MLX5_MAX_SQ_WQEBBS);
  arguments.check_all_used();
  for (bool use_inline : {true, false}) {
    Result r = measure(c, use_inline);
    if (!r.payload_validated) {
      report.add(r);
      throw Error("latency: payload validation failed for " + r.label);
    }
    report.add(r);
  }
  return 0;
}

const bool registered = register_experiment(
    {"latency", "issue, put+completion and round trip of one 8 B write (host submitters)",
     run_latency, true});

}  // namespace
}  // namespace dissect::bench
