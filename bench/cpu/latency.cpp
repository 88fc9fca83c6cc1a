// `dissect latency`: the cost of one 8 B RDMA write (paper §4.1), with host threads standing in for
// GPU threads. The NIC is the softnic host-thread engine (both PEs in this process) or, with
// --provider mlx5, a ConnectX on each of two ranks (fabric.h): rank 0 measures, rank 1 is the
// target and the round trip's responder.
//
//   issue           reserve, build the WQE, publish, dbrec + doorbell (completion excluded)
//   put+completion  issue and the wait until its CQE retires it
//   round trip      PE0 writes a word into PE1; PE1, polling that word, writes it back; PE0 sees it
//
// `--sizes 8,64,512` (or nccl-tests' `-b 8 -e 512 -f 2`) sweeps the payload: every size runs the
// pointer write, and the inline one up to the 220 B inline limit the paper uses. The value of a
// write sits in its first and its last 8 B word; the round trip polls the last one (as perftest
// polls the last byte), the checks read the first.
//
// One outstanding operation; `--warmup` operations are discarded; each of `--runs` runs builds a
// fresh fabric (a softnic and its PEs, or newly connected QPs on both ranks). The payload (the
// operation's sequence number) is checked after every operation when both PEs are in this process,
// and after the run through the target rank otherwise, so a lost or stale write fails the run.
#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dissect/bench/experiment.h"
#include "dissect/bench/fabric.h"
#include "dissect/bench/progress.h"
#include "dissect/common/wait.h"
#include "dissect/common/error.h"
#include "dissect/gda/gda.h"
#include "dissect/softnic/softnic.h"

namespace dissect::bench {
namespace {

// Correct for a host-thread engine, and for mlx5's doorbell forwarder (also a host thread).
using Policy = gda::counted<gda::ordering::system_release_store>;  // telemetry counts its posts
constexpr auto kExclusive = gda::Sharing::exclusive;

struct LatencyConfig {
  uint64_t iterations;
  uint64_t warmup;
  uint64_t runs;
  uint64_t size;
  uint64_t sq_depth;
};

// Each PE's registered buffer: word 0 is the landing word the peer writes, the second half
// (from kSourceWord) is this PE's source for pointer writes.
constexpr size_t kBufferWords = 512;
constexpr size_t kSourceWord = 256;
constexpr uint64_t kMaxBytes = (kBufferWords - kSourceWord) * 8;  // the source half: 2 KiB
constexpr uint64_t kMaxInlineBytes = 220;                          // the paper's inline limit

// The word of a `size` B write that the round trip polls: its last whole 8 B word.
size_t last_word(uint64_t size) { return size / 8 - 1; }

FabricConfig fabric_config(const LatencyConfig& c) {
  return FabricConfig{1, kBufferWords, static_cast<uint32_t>(c.sq_depth)};
}

// Posts `value` (size bytes, the value in the first 8) from PE `from` into its peer's landing word.
// Everything here is inside the timed issue, so it builds nothing the put does not need: an 8 B
// inline put goes from the register (gda::put_value), a larger one copies `size` bytes.
gda::Status send_word(FabricSide& from, bool use_inline, uint32_t size, uint64_t value,
                      uint64_t* end) {
  const nic::QpHandle qp = from.qps[0];
  const uint64_t remote = from.peer.address;
  if (use_inline && size == 8) {
    return gda::put_value<Policy, kExclusive>(qp, value, size, remote, from.peer.rkey,
                                              gda::Completion::signaled, end);
  }
  if (use_inline) {
    uint64_t payload[32];  // size <= 220: the value, zeros, the value in the last whole word
    std::memset(payload, 0, sizeof payload);
    payload[0] = value;
    payload[last_word(size)] = value;
    gda::InlineWriteRequest r{payload, size, remote, from.peer.rkey};
    return gda::put_inline<Policy, kExclusive>(qp, r, gda::Completion::signaled, end);
  }
  uint64_t* source = from.buffer + kSourceWord;
  source[0] = value;
  source[last_word(size)] = value;
  gda::WriteRequest r{reinterpret_cast<uintptr_t>(source), from.lkey, size, remote,
                      from.peer.rkey};
  return gda::put<Policy, kExclusive>(qp, r, gda::Completion::signaled, end);
}

void check(gda::Status status, const char* what) {
  if (status != gda::Status::ok) {
    throw Error(std::string("latency: ") + what + " failed: " + gda::to_string(status));
  }
}

uint64_t wait_for_word(uint64_t* word, uint64_t value) {
  // Backoff yields while spinners outnumber cores: the responder thread needs this core.
  BoundedWait wait;
  while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != value) {
    if (wait.expired()) {
      throw Error("latency: timed out waiting for the data word to become " + std::to_string(value));
    }
  }
  return now_ns();
}

// Issue and put+completion samples of one run, in microseconds; false if a payload was wrong.
// PE 0 writes into PE 1; when PE 1 lives in this process every write is checked as it lands,
// otherwise the last one is, through read_word once the run is over.
bool run_issue(Fabric& f, const LatencyConfig& c, bool use_inline, std::vector<double>* issue,
               std::vector<double>* completion) {
  bool valid = true;
  const uint64_t total = c.warmup + c.iterations;
  if (f.drives(0)) {
    FabricSide& me = f.side(0);
    const nic::QpHandle qp = me.qps[0];
    const uint64_t* peer_landing = f.drives(1) ? f.side(1).buffer : nullptr;
    for (uint64_t i = 0; i < total; ++i) {
      uint64_t end = 0;
      const uint64_t value = i + 1;
      const uint64_t t0 = now_ns();
      check(send_word(me, use_inline, static_cast<uint32_t>(c.size), value, &end), "put");
      const uint64_t t1 = now_ns();
      check(gda::wait_completion<Policy, kExclusive>(qp, end), "completion");
      const uint64_t t2 = now_ns();
      if (peer_landing) valid &= peer_landing[0] == value;
      if (i >= c.warmup) {
        issue->push_back((t1 - t0) / 1e3);
        completion->push_back((t2 - t0) / 1e3);
      }
    }
  }
  f.barrier();
  const bool landed = f.read_word(1, 0) == total;  // a collective: read on every rank
  return landed && valid;
}

// PE 1: polls its landing word for each ping and writes the same value back.
void respond(Fabric& f, const LatencyConfig& c, bool use_inline) {
  FabricSide& me = f.side(1);
  const nic::QpHandle qp = me.qps[0];
  for (uint64_t i = 0; i < c.warmup + c.iterations; ++i) {
    wait_for_word(me.buffer + last_word(c.size), i + 1);
    uint64_t end = 0;
    check(send_word(me, use_inline, static_cast<uint32_t>(c.size), i + 1, &end), "reply");
    check(gda::wait_completion<Policy, kExclusive>(qp, end), "reply completion");
  }
}

// PE 0 writes a word into PE 1; PE 1, polling that word, writes it back; PE 0 sees it. In one
// process PE 1 answers from a thread; on two ranks rank 1 answers on its main thread.
bool run_round_trip(Fabric& f, const LatencyConfig& c, bool use_inline,
                    std::vector<double>* round_trip) {
  const uint64_t total = c.warmup + c.iterations;
  std::atomic<bool> responder_ok{true};
  std::thread responder;
  if (f.drives(1) && f.drives(0)) {
    responder = std::thread([&] {
      try {
        respond(f, c, use_inline);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        responder_ok = false;
      }
    });
  } else if (f.drives(1)) {
    respond(f, c, use_inline);  // an error ends this rank; rank 0 times out naming the word
  }
  if (f.drives(0)) {
    FabricSide& me = f.side(0);
    const nic::QpHandle qp = me.qps[0];
    for (uint64_t i = 0; i < total && responder_ok; ++i) {
      uint64_t end = 0;
      const uint64_t t0 = now_ns();
      check(send_word(me, use_inline, static_cast<uint32_t>(c.size), i + 1, &end), "ping");
      const uint64_t t1 = wait_for_word(me.buffer + last_word(c.size), i + 1);
      check(gda::wait_completion<Policy, kExclusive>(qp, end), "ping completion");
      if (i >= c.warmup) round_trip->push_back((t1 - t0) / 1e3);
    }
  }
  if (responder.joinable()) responder.join();
  f.barrier();
  // Both reads on every rank: they are collectives, so neither may be skipped by a short circuit.
  const uint64_t pong = f.read_word(0, 0);
  const uint64_t ping = f.read_word(1, 0);
  return responder_ok && pong == total && ping == total;
}

Result measure(FabricSession& session, const LatencyConfig& c, bool use_inline) {
  Result result;
  result.experiment = "latency";
  result.label = std::string(use_inline ? "inline " : "pointer ") + std::to_string(c.size) + " B";
  result.placement = "host";
  result.submitter = "host-thread";
  result.knobs = {{"ordering", Policy::key},      {"payload", use_inline ? "inline" : "pointer"},
                  {"bytes", std::to_string(c.size)}, {"sq_wqebbs", std::to_string(c.sq_depth)},
                  {"outstanding", "1"},           {"iterations", std::to_string(c.iterations)},
                  {"warmup", std::to_string(c.warmup)}};
  Metric issue{"issue", "us", {}}, completion{"put+completion", "us", {}},
      round_trip{"round trip", "us", {}};
  bool valid = true;
  for (uint64_t run = 0; run < c.runs; ++run) {
    std::vector<double> issue_samples, completion_samples, round_trip_samples;
    {
      auto fabric = session.connect(fabric_config(c));
      if (run == 0) fabric->label(result);
      valid &= run_issue(*fabric, c, use_inline, &issue_samples, &completion_samples);
    }
    {
      auto fabric = session.connect(fabric_config(c));  // a fresh pair, as every run had
      valid &= run_round_trip(*fabric, c, use_inline, &round_trip_samples);
    }
    issue.runs.push_back(summarize(issue_samples));
    completion.runs.push_back(summarize(completion_samples));
    round_trip.runs.push_back(summarize(round_trip_samples));
  }
  result.metrics = {issue, completion, round_trip};
  result.payload_validated = valid;
  return result;
}

int run_latency(const Arguments& arguments, Report& report) {
  const FabricSessionBuilder fabric(arguments.provider({"softnic", "mlx5"}), arguments);
  const bool quick = arguments.flag("quick", "2,000 timed and 200 warm-up operations per run instead of 20,000 and 1,000");
  LatencyConfig c;
  c.iterations = arguments.integer("iterations", quick ? 2000 : 20000, 1, 100'000'000,
                                   "timed operations per run (perftest's -n), one outstanding");
  c.warmup = arguments.integer("warmup", quick ? 200 : 1000, 0, 100'000'000,
                               "operations per run before the timed ones, discarded");
  c.runs = arguments.integer("runs", 3, 1, 100, "independent runs, each on a fresh fabric; "
                                                "the table shows the median of their p50s and the spread");
  const uint64_t size = arguments.integer("size", 8, 8, kMaxBytes,  // one size: --sizes N
                                          "payload of the write, bytes (one size; --sizes for a sweep)");
  const std::vector<uint64_t> sizes = arguments.sizes({size}, 8, kMaxBytes, "payload of one write");
  c.sq_depth = arguments.power_of_two("sq-depth", 64, mlx5::MLX5_MAX_SQ_WQEBBS,
                                      "send queue depth of each QP, WQEBBs (64 B each)");
  arguments.check_all_used();
  const std::unique_ptr<FabricSession> session = fabric.open();
  size_t cases = 0;
  for (uint64_t s : sizes) cases += s <= kMaxInlineBytes ? 2 : 1;
  Progress progress("latency", cases);
  for (uint64_t s : sizes) {
    c.size = s;
    for (bool use_inline : {true, false}) {
      if (use_inline && s > kMaxInlineBytes) continue;  // beyond the inline limit: pointer only
      Result r = measure(*session, c, use_inline);
      progress.done(r.label);
      // Both ranks know the outcome (read_word is collective), so both stop here together.
      if (!r.payload_validated) {
        report.add(r);
        throw Error("latency: payload validation failed for " + r.label);
      }
      report.add(r);
    }
  }
  if (!session->measures()) report.set_served(session->served_line("latency"));
  return 0;
}

const bool registered = register_experiment(
    {"latency", "issue, put+completion and round trip of one 8 B write (host submitters)",
     run_latency, true});

}  // namespace
}  // namespace dissect::bench
