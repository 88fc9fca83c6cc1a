// Shared by the GPU experiments: the two-PE setup, the clock calibration, sample statistics and
// the device-side payload pattern.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "dissect/bench/gpu_experiments.h"
#include "cqe_lateness.h"
#include "measurement.h"
#include "dissect/bench/gpu_pe.h"
#include "dissect/common/clock.h"
#include "dissect/common/cuda.h"
#include "dissect/gda/gda.h"
#include "dissect/nic/nic.h"
#include "dissect/softnic/gpu_engine.h"

namespace dissect::bench::gpu {

inline constexpr uint32_t SLOT = 256;    // bytes per destination slot (>= 220)
inline constexpr uint32_t SLOTS = 512;   // op i writes slot i % SLOTS

DISSECT_HD inline uint8_t payload_byte(uint32_t op, uint32_t b) {
  return static_cast<uint8_t>((op * 2654435761u + b * 40503u) >> 11) | 1;
}

struct Timer {
  unsigned long long cycles;  // clock64 over the whole kernel
  unsigned long long ns;      // globaltimer over the same span
};

// Samples: cycles per op (issue, total), written by one thread.
struct SampleBuffers {
  unsigned long long* a = nullptr;
  unsigned long long* b = nullptr;
  Timer* timer = nullptr;
  uint32_t* status = nullptr;
};

// Two PEs and their softnic(s), as the GPU tests build them.
struct PePair {
  std::vector<std::unique_ptr<softnic::SoftNic>> nics;
  struct Pe : GpuPe {
    int device = 0;
    cudaStream_t stream = nullptr;
  } pe[2];
  SampleBuffers samples;
  size_t buffer_bytes = 0;
  ~PePair();
};

std::unique_ptr<PePair> make_pair(const PePairConfig& config, uint32_t iterations);

// Globaltimer step (smallest nonzero delta) measured on `device`, once per device and process.
// Safe while engines run: it allocates and frees nothing.
double measure_globaltimer_step(int device);

// Waits (bounded, never cudaDeviceSynchronize) for a stream; on a failure or the deadline throws
// naming `what` and whatever `describe` says of the model's state (the engine's status block, the
// proxy's rings and QPs).
void wait_for_stream(cudaStream_t stream, const std::string& what, double seconds,
                     const std::function<std::string()>& describe);
void wait_for_stream(cudaStream_t stream, const softnic::SoftNic& nic, const char* what,
                     double seconds);
void wait(cudaStream_t stream, const PePair& pair, const char* what, double seconds = 15);

struct Percentiles {
  double p10, p50, p90;
};
Percentiles percentiles(std::vector<double> values);

// Converts cycle samples to ns with the run's effective clock.
std::vector<double> to_ns(const unsigned long long* cycles, uint32_t n, const Timer& timer);
inline double clock_mhz(const Timer& t) { return t.ns ? double(t.cycles) * 1e3 / double(t.ns) : 0; }

void add_run(gpu::TimedMetric& metric, const std::vector<double>& ns);
// A run timed in cycles: its ns (with the run's effective clock) and its cycle percentiles.
void add_run(gpu::TimedMetric& metric, const unsigned long long* cycles, uint32_t n, const Timer& timer);

// The samples copied back from device memory after a kernel.
struct HostSamples {
  std::vector<unsigned long long> a, b;
  Timer timer{};
  uint32_t status = 0;
};
HostSamples read_samples(const PePair& pair, uint32_t n);
void reset_status(const PePair& pair);

// What the runs of one measurement add up to.
struct RunTally {
  double clock_sum = 0;   // effective SM clock (MHz) summed over the recorded runs
  uint32_t recorded = 0;  // runs whose samples were kept
  bool valid = true;      // no run failed and every payload check passed
  std::string note;       // "run i: why; " for each failed run

  void record(const Timer& timer) {
    clock_sum += clock_mhz(timer);
    ++recorded;
  }
  void fail(uint32_t run, const std::string& why) {
    note += "run " + std::to_string(run) + ": " + why + "; ";
    valid = false;
  }
  double mean_clock_mhz() const { return recorded ? clock_sum / recorded : 0; }
};

// `config.runs` independent runs, each on a fresh PE pair (make_pair, engines running) with its
// status reset: body(PePair&, uint32_t run, RunTally&) launches, waits, reads back and records the
// run in the tally (or fails it). Each run's end is a progress line (config.progress).
template <typename Body>
RunTally run_on_fresh_pairs(const PePairConfig& config, Body&& body) {
  RunTally tally;
  for (uint32_t run = 0; run < config.runs; ++run) {
    auto pair = make_pair(config, config.iterations);
    reset_status(*pair);
    body(*pair, run, tally);
    config.progress.run_done(run);
  }
  return tally;
}

// Checks slot i % SLOTS of `dst` holds the last op's payload (`length` bytes) for ops
// [0, total_ops); reads back through a stream.
bool validate_slots(const uint8_t* dst, uint32_t total_ops, uint32_t length, cudaStream_t stream);

// Under an enabled timing profile: how long after the profile's date the engine stamped each CQE
// of QP `qpn` of `nic` still in its send CQ (the softnic's CQE extension, dissect/softnic/
// cqe_times.h: the ns from the doorbell's ring date to the stamp, less modelled_cqe_release_ns for
// a put of this payload and `connects` DC connects), as one run of `late`. 0 where the engine met
// every date; above it the CQEs left when the engine got there, and a latency measured through
// them is the engine's lone path, not the profile's. Nothing under a profile that models nothing.
void record_cqe_lateness(const softnic::SoftNic& nic, uint32_t qpn, bool pointer, uint32_t connects,
                         cudaStream_t stream, TimedMetric& late);

// The metric record_cqe_lateness fills.
inline TimedMetric cqe_lateness_metric() {
  TimedMetric m{"CQE after the profile's date", {}, {}, {}};
  return m;
}

gpu::Measurement base_result(const PePairConfig& config, const char* name,
                                const std::string& variant, const char* ordering,
                                uint32_t bytes, bool is_inline);

// The policy the engine needs for a correct run: GPU scope for a kernel engine on GPU-resident
// queues, system scope otherwise.
inline bool engine_needs_system_scope(const PePairConfig& c) {
  return !(c.engine == "gpu-kernel" && c.placement == "gpu" && c.pe_layout == "one-gpu");
}

// ---- the timed op loop, shared by single_operation / ordering / inline_sweep ------------------

// Where a put's payload comes from: a registered source buffer (pointer WQE), an inline copy of a
// buffer (any size up to max_inline), or an inline copy of a register (put_value, up to 8 B).
enum class Payload { pointer, inline_buffer, inline_value };

// Where the submitter keeps the QP's counters: registers (gda::OwnedQp, the paper's minimal path)
// or SendQueueState in the queue's memory (read on every reservation).
enum class Counters { registers, memory };

DISSECT_HD inline uint64_t payload_value(uint32_t op, uint32_t length) {
  uint64_t v = 0;
  for (uint32_t b = 0; b < length && b < 8; ++b) v |= uint64_t{payload_byte(op, b)} << (8 * b);
  return v;
}

// What a latency kernel puts from and to: the sender's source slots and their lkey, the peer's
// destination slots and their rkey, the payload length (op i uses slot i % SLOTS of each).
struct PutPath {
  uint8_t* src;
  uint32_t lkey;
  uint8_t* dst;
  uint32_t rkey;
  uint32_t length;
};

// How many operations a latency kernel runs; the first `warmup` are not recorded.
struct OpCount {
  uint32_t warmup;
  uint32_t iterations;
};

// One put of op `i`, timed from its request to the return of the issue: a[] cycles.
template <typename Policy, Payload P, typename Queue>
__device__ inline uint32_t timed_put(Queue& queue, uint32_t i, const PutPath& path,
                                     uint64_t* end, long long* issued_at, long long* issued) {
  uint8_t* const src = path.src;
  uint8_t* const target = path.dst + size_t{i % SLOTS} * SLOT;
  const uint32_t lkey = path.lkey, rkey = path.rkey, length = path.length;
  uint32_t status;
  if constexpr (P == Payload::inline_value) {
    const uint64_t value = payload_value(i, length);
    *issued_at = clock64();
    status = static_cast<uint32_t>(gda::put_value<Policy>(
        queue, value, length, reinterpret_cast<uint64_t>(target), rkey, gda::Completion::signaled,
        end));
  } else if constexpr (P == Payload::inline_buffer) {
    // The payload waits in the source slot, written and fenced before the op (prepare_inline):
    // the issue times the copy into the WQE, as a user's buffer in GPU memory would be copied.
    const uint8_t* s = src + size_t{i % SLOTS} * SLOT;
    gda::InlineWriteRequest r{s, length, reinterpret_cast<uint64_t>(target), rkey};
    *issued_at = clock64();
    status = static_cast<uint32_t>(gda::put_inline<Policy>(queue, r, gda::Completion::signaled, end));
  } else {
    uint8_t* s = src + size_t{i % SLOTS} * SLOT;
    for (uint32_t b = 0; b < length; ++b) s[b] = payload_byte(i, b);
    gda::WriteRequest r{reinterpret_cast<uint64_t>(s), lkey, length,
                        reinterpret_cast<uint64_t>(target), rkey};
    *issued_at = clock64();
    status = static_cast<uint32_t>(gda::put<Policy>(queue, r, gda::Completion::signaled, end));
  }
  *issued = clock64();
  return status;
}

// Op i's samples (after the warm-up): a[] = issue, b[] = put+completion, in cycles.
__device__ inline void record_op(const SampleBuffers& out, uint32_t i, uint32_t warmup,
                                 long long requested, long long issued, long long completed) {
  if (i < warmup) return;
  out.a[i - warmup] = static_cast<unsigned long long>(issued - requested);
  out.b[i - warmup] = static_cast<unsigned long long>(completed - requested);
}

// A GPU kernel's status word (SampleBuffers::status, a probe's window, a proxy kernel's): its
// cause in bits 0-7, the QP's error syndrome in 8-15 and the PE that stopped in 16-23, so the host
// names all three. A cause is a gda::Status (below 100) or one of these (from 101; from 150 the
// GDAKI ablation's row 5), so no two readings of a word collide. Every kernel of bench/gpu names
// its causes here: no local status enums.
enum KernelCause : uint32_t {
  CAUSE_NONE = 0,
  CAUSE_ERROR_CQE = 101,          // a peer library's wait saw an error CQE (its syndrome beside it)
  CAUSE_LIBRARY_TIMEOUT = 102,    // a peer library's wait gave up
  CAUSE_POST_REFUSED = 103,       // a post or a proxy enqueue was refused
  CAUSE_COMPLETION_FAILED = 104,  // the wait for a post's completion failed
  CAUSE_PAYLOAD_MISMATCH = 105,   // after its completion the destination did not hold the op's value
  CAUSE_REPLY_TIMEOUT = 106,      // the word a pinger polls (the reply) did not arrive in its bound
  CAUSE_REQUEST_TIMEOUT = 107,    // the word a responder polls (the request) did not arrive in its bound
  CAUSE_ABLATION_SPIN = 150,      // gdaki-ablation row 5: a spin passed its bound
  CAUSE_ABLATION_INDEX = 151,     // row 5: DOCA's reservation disagrees with mini-gda's
  CAUSE_ABLATION_SLOT = 152,      // row 5: the slot-availability check found its CQE unconsumed
  CAUSE_PEER_SILENT = 200,        // the round trip's peer did not answer within 5 s
};
DISSECT_HD inline uint32_t kernel_status(uint32_t cause, uint32_t syndrome = 0, uint32_t pe = 0) {
  return cause == CAUSE_NONE ? 0u : (cause & 0xff) | (syndrome & 0xff) << 8 | (pe & 0xff) << 16;
}
inline uint32_t status_cause(uint32_t word) { return word & 0xff; }
inline uint32_t status_syndrome(uint32_t word) { return (word >> 8) & 0xff; }
inline uint32_t status_pe(uint32_t word) { return (word >> 16) & 0xff; }
// "PE 1: gda status timeout (QP error syndrome 0)".
inline std::string describe_kernel_status(uint32_t word) {
  const uint32_t cause = status_cause(word);
  std::string what;
  switch (cause) {
    case CAUSE_ERROR_CQE: what = "the library's wait saw an error CQE"; break;
    case CAUSE_LIBRARY_TIMEOUT: what = "the library's wait timed out"; break;
    case CAUSE_POST_REFUSED: what = "a post was refused"; break;
    case CAUSE_COMPLETION_FAILED: what = "a completion wait failed"; break;
    case CAUSE_PAYLOAD_MISMATCH: what = "the payload did not land"; break;
    case CAUSE_REPLY_TIMEOUT: what = "the reply did not arrive in time"; break;
    case CAUSE_REQUEST_TIMEOUT: what = "the request did not arrive in time"; break;
    case CAUSE_ABLATION_SPIN: what = "a spin passed its bound"; break;
    case CAUSE_ABLATION_INDEX: what = "DOCA's reservation disagrees with mini-gda's"; break;
    case CAUSE_ABLATION_SLOT: what = "the slot-availability check found its CQE unconsumed"; break;
    case CAUSE_PEER_SILENT: what = "the peer did not answer within 5 s"; break;
    default: what = std::string("gda status ") + to_string(static_cast<gda::Status>(cause));
  }
  return "PE " + std::to_string(status_pe(word)) + ": " + what + " (QP error syndrome " +
         std::to_string(status_syndrome(word)) + ")";
}

// The kernel's span on both clocks (for the effective SM clock) and its status word.
__device__ inline void finish_timing(const SampleBuffers& out, long long c0, uint64_t g0,
                                     uint32_t status) {
  const long long c1 = clock64();
  const uint64_t g1 = now_ns();
  out.timer->cycles = static_cast<unsigned long long>(c1 - c0);
  out.timer->ns = g1 - g0;
  *out.status = status;
}

// The timed loop of a peer library's put-latency kernel (peers/gdaki_put_kernel.cuh,
// peers/nvshmem_latency.cu), with put_latency_kernel's spans: one thread, one 8 B put outstanding;
// op i writes slot i % SLOTS of path.dst, inline or from the same slot of path.src (filled first);
// issue is the library's post alone, put+completion the post and its wait. The library's side is
// `poster`, each call inlined into the loop as the library's code was written into it:
//   remote(uint8_t* slot), local(uint8_t* slot)  its addresses of a slot, made before the span
//   put_value(remote, uint64_t value)            its inline post
//   put(remote, local)                           its post of 8 B from the source slot
//   uint32_t complete()                          its wait, as a kernel status word (0: done)
template <bool Inline, typename Poster>
__device__ __forceinline__ void time_library_puts(Poster& poster, const PutPath& path,
                                                  const OpCount& ops, const SampleBuffers& out) {
  const uint32_t warmup = ops.warmup, iterations = ops.iterations;
  const uint64_t g0 = now_ns();
  const long long c0 = clock64();
  uint32_t status = 0;
  for (uint32_t i = 0; i < warmup + iterations && status == 0; ++i) {
    const auto remote = poster.remote(path.dst + size_t{i % SLOTS} * SLOT);
    long long ca;
    if constexpr (Inline) {
      const uint64_t value = payload_value(i, 8);
      ca = clock64();
      poster.put_value(remote, value);
    } else {
      uint8_t* s = path.src + size_t{i % SLOTS} * SLOT;
      for (uint32_t b = 0; b < 8; ++b) s[b] = payload_byte(i, b);
      const auto local = poster.local(s);
      ca = clock64();
      poster.put(remote, local);
    }
    const long long cb = clock64();
    status = poster.complete();
    const long long cc = clock64();
    record_op(out, i, warmup, ca, cb, cc);
  }
  finish_timing(out, c0, g0, status);
}

// Writes op i's payload into its source slot, 16 B at a time, and waits until the stores are
// performed (a GPU-scope fence): outside every timed span, so that the op's loads of it do not
// wait behind stores still in flight (measured on the H200: a payload built byte by byte just
// before the put made the inline issue grow 0.12 us per 16 B).
__device__ inline void prepare_inline(uint8_t* src, uint32_t i, uint32_t length) {
  uint8_t* s = src + size_t{i % SLOTS} * SLOT;
  for (uint32_t at = 0; at < length; at += 16) {
    uint32_t words[4];
    for (uint32_t k = 0; k < 4; ++k) {
      uint32_t w = 0;
      for (uint32_t b = 0; b < 4; ++b) {
        const uint32_t byte = at + 4 * k + b;
        w |= uint32_t{byte < length ? payload_byte(i, byte) : uint8_t{0}} << (8 * b);
      }
      words[k] = w;
    }
    *reinterpret_cast<uint4*>(s + at) = make_uint4(words[0], words[1], words[2], words[3]);
  }
  __threadfence();
}

// One thread: `warmup + iterations` puts of `length` bytes, each signalled and waited for before
// the next (at most one outstanding). a[] = issue cycles, b[] = put+completion cycles.
template <typename Policy, Payload P, Counters C>
__global__ void put_latency_kernel(nic::QpHandle qp, PutPath path, OpCount ops, SampleBuffers out) {
  const uint64_t g0 = now_ns();
  const long long c0 = clock64();
  uint32_t status = 0;
  if constexpr (P == Payload::inline_buffer) prepare_inline(path.src, 0, path.length);
  auto run = [&](auto& queue) {
    for (uint32_t i = 0; i < ops.warmup + ops.iterations && status == 0; ++i) {
      uint64_t end = 0;
      long long ca, cb;
      status = timed_put<Policy, P>(queue, i, path, &end, &ca, &cb);
      if (status == 0) {
        status = static_cast<uint32_t>(
            gda::wait_completion<Policy, gda::Sharing::exclusive>(queue, end));
      }
      const long long cc = clock64();
      record_op(out, i, ops.warmup, ca, cb, cc);
      if constexpr (P == Payload::inline_buffer) prepare_inline(path.src, i + 1, path.length);
    }
  };
  if constexpr (C == Counters::registers) {
    gda::OwnedQp owned = gda::own(qp);
    run(owned);
  } else {
    run(qp);
  }
  finish_timing(out, c0, g0, kernel_status(status, status != 0 ? qp.state->error : 0));
}

// Reads a run's samples into `samples`: a kernel status other than 0 fails the run with
// failure(status) and returns false, otherwise the run's timer is recorded.
template <typename Failure>
bool read_run(const PePair& pair, uint32_t run, RunTally& t, uint32_t n, Failure&& failure,
              HostSamples* samples) {
  *samples = read_samples(pair, n);
  if (samples->status != 0) {
    t.fail(run, failure(samples->status));
    return false;
  }
  t.record(samples->timer);
  return true;
}

// After a latency kernel on pair.pe[0]'s stream: waits for it, and records the run's issue and
// put+completion samples (or fails the run with failure(status) when its status is not 0), then
// validates the 8..length B payload slots of every op.
template <typename Failure>
void record_latency_run(PePair& pair, uint32_t run, RunTally& t, const PePairConfig& config,
                        uint32_t length, const char* what, gpu::TimedMetric& issue, gpu::TimedMetric& total,
                        Failure&& failure) {
  auto& a = pair.pe[0];
  wait(a.stream, pair, what);
  HostSamples samples;
  if (!read_run(pair, run, t, config.iterations, failure, &samples)) return;
  add_run(issue, samples.a.data(), config.iterations, samples.timer);
  add_run(total, samples.b.data(), config.iterations, samples.timer);
  t.valid = t.valid &&
            validate_slots(pair.pe[1].dst, config.warmup + config.iterations, length, a.stream);
}

// The tally of a latency measurement into `result`; `late` (record_cqe_lateness), where a
// profile gave the CQEs dates, beside them, and a note when the engine missed them.
inline void finish_latency_result(const RunTally& tally, gpu::TimedMetric issue, gpu::TimedMetric total,
                                  gpu::Measurement& result, gpu::TimedMetric late = {}) {
  result.metrics = {std::move(issue), std::move(total)};
  result.note += tally.note;
  if (!late.p50_ns.empty()) {
    result.note += late_cqe_note(summary_p50(late));
    result.metrics.push_back(std::move(late));
  }
  result.payload_validated = tally.valid && tally.recorded > 0;
  result.sm_clock_mhz = tally.mean_clock_mhz();
}

// Runs put_latency_kernel `config.runs` times on a fresh PE pair each run; fills `result`.
template <typename Policy, Payload P, Counters C = Counters::registers>
void measure_put_latency(const PePairConfig& config, uint32_t length,
                         gpu::Measurement& result) {
  gpu::TimedMetric issue{"issue", {}, {}, {}}, total{"put+completion", {}, {}, {}};
  gpu::TimedMetric late = cqe_lateness_metric();
  const RunTally tally = run_on_fresh_pairs(config, [&](PePair& pair, uint32_t run, RunTally& t) {
    auto& a = pair.pe[0];
    auto& b = pair.pe[1];
    cudaSetDevice(a.device);
    put_latency_kernel<Policy, P, C><<<1, 1, 0, a.stream>>>(
        a.qp->handle(), PutPath{a.src, a.src_mr.lkey, b.dst, b.dst_mr.rkey, length},
        OpCount{config.warmup, config.iterations}, pair.samples);
    check_cuda(cudaGetLastError(), "launch put_latency_kernel");
    record_latency_run(pair, run, t, config, length, "put latency kernel", issue, total,
                       describe_kernel_status);
    record_cqe_lateness(*a.nic, a.qp->qpn(), P == Payload::pointer, 0, a.stream, late);
  });
  finish_latency_result(tally, issue, total, result, std::move(late));
}

// A peer library's put latency (gpu-latency --path, bench/gpu/peers/): `view(pair)` makes the
// library's view of PE 0's QP, kept until the run is read back; `launch(view, pair)` launches its
// kernel on PE 0's stream; the rest is measure_put_latency's (8 B; failure(status) names a run
// that failed).
template <typename View, typename Launch, typename Failure>
void measure_peer_put_latency(const PePairConfig& config, const char* what,
                              Measurement& result, View&& view, Launch&& launch, Failure&& failure) {
  TimedMetric issue{"issue", {}, {}, {}}, total{"put+completion", {}, {}, {}};
  const RunTally tally = run_on_fresh_pairs(config, [&](PePair& pair, uint32_t run, RunTally& t) {
    cudaSetDevice(pair.pe[0].device);
    const auto qp = view(pair);
    launch(qp, pair);
    record_latency_run(pair, run, t, config, 8, what, issue, total, failure);
  });
  finish_latency_result(tally, issue, total, result);
}

// A peer library's two gpu-latency rows, "<path>, inline" and "<path>, pointer": measure(inline,
// row) fills each, note(inline) says which put and wait it ran.
template <typename Measure, typename Note>
std::vector<Measurement> peer_single_operation(const PePairConfig& config,
                                               const std::string& path, const char* ordering,
                                               const char* library, const std::string& version,
                                               Measure&& measure, Note&& note) {
  std::vector<Measurement> out;
  for (const bool is_inline : {true, false}) {
    Measurement r = base_result(config, "latency", path + (is_inline ? ", inline" : ", pointer"),
                                ordering, 8, is_inline);
    measure(is_inline, r);
    r.library = library;
    r.library_version = version;
    r.note += note(is_inline);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace dissect::bench::gpu
