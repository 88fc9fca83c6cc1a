// Table 3 (paper §4.1): issue, put+completion and round trip of one 8 B put by one GPU thread,
// inline and pointer, with at most one operation outstanding; --transport dc adds the same puts from
// a DCI (dc_latency.cuh) beside them.
#include <cstdio>

#include "dc_latency.cuh"
#include "dissect/common/wait.h"
#include "dissect/softnic/profile.h"
#include "gpu_command.h"
#include "harness.cuh"
#include "peer_latency.h"
#include "to_report.h"

namespace dissect::bench {
namespace gpu {

// One side of the ping-pong: role 0 (PE 0) or 1, the source word a pointer put stages its value
// in, the flag this side polls and the peer's flag it writes (under the peer's rkey).
struct RoundTripSide {
  uint32_t role;
  uint8_t* src;
  uint32_t lkey;
  uint64_t* my_flag;
  uint64_t* peer_flag;
  uint32_t rkey;
};

// Ping-pong between two PEs polling a data word. Role 0 (PE 0) puts i+1 into PE 1's flag and
// waits for PE 1's i+1 in its own flag: a[] = round-trip cycles. Role 1 answers.
template <typename Policy, bool Inline>
__global__ void round_trip_kernel(nic::QpHandle qp, RoundTripSide side, OpCount ops,
                                  SampleBuffers out) {
  const uint64_t g0 = now_ns();
  const long long c0 = clock64();
  const uint32_t role = side.role, lkey = side.lkey, rkey = side.rkey;
  const uint32_t warmup = ops.warmup, iterations = ops.iterations;
  uint64_t* const my_flag = side.my_flag;
  uint64_t* const peer_flag = side.peer_flag;
  uint32_t status = 0;
  uint64_t* staging = reinterpret_cast<uint64_t*>(side.src);
  gda::OwnedQp owned = gda::own(qp);
  auto send = [&](uint64_t value) -> uint32_t {
    uint64_t end = 0;
    if constexpr (Inline) {
      return static_cast<uint32_t>(gda::put_value<Policy>(
          owned, value, 8, reinterpret_cast<uint64_t>(peer_flag), rkey, gda::Completion::signaled,
          &end));
    } else {
      *staging = value;
      gda::WriteRequest r{reinterpret_cast<uint64_t>(staging), lkey, 8,
                          reinterpret_cast<uint64_t>(peer_flag), rkey};
      return static_cast<uint32_t>(gda::put<Policy>(owned, r, gda::Completion::signaled, &end));
    }
  };
  // The bound without the spin's sleep (BoundedWait::over): the poll is what the round trip times,
  // and a __nanosleep between loads would add to it.
  auto await = [&](uint64_t value) -> uint32_t {
    BoundedWait wait(5'000'000'000ull);
    while (load_acquire<Scope::system>(my_flag) < value) {
      if (wait.over()) return uint32_t{CAUSE_PEER_SILENT};
    }
    return 0;
  };
  for (uint32_t i = 0; i < warmup + iterations && status == 0; ++i) {
    const uint64_t value = i + 1;
    if (role == 0) {
      const long long ca = clock64();
      status = send(value);
      if (status == 0) status = await(value);
      const long long cb = clock64();
      if (i >= warmup) out.a[i - warmup] = static_cast<unsigned long long>(cb - ca);
    } else {
      status = await(value);
      if (status == 0) status = send(value);
    }
    // Retire the put outside the timed span (the peer's answer implies it executed).
    if (status == 0) status = static_cast<uint32_t>(gda::quiet<Policy>(owned));
  }
  if (role == 0) {
    finish_timing(out, c0, g0, kernel_status(status, 0, 0));
  } else if (status != 0) {
    *out.status = kernel_status(status, 0, 1);
  }
}

template <typename Policy, bool Inline>
void measure_round_trip(const PePairConfig& config, gpu::Measurement& result) {
  gpu::TimedMetric rtt{"round trip", {}, {}, {}};
  const RunTally tally = run_on_fresh_pairs(config, [&](PePair& pair, uint32_t run, RunTally& t) {
    auto& a = pair.pe[0];
    auto& b = pair.pe[1];
    // Flags: the first word of each PE's destination buffer.
    auto* flag_a = reinterpret_cast<uint64_t*>(a.dst);
    auto* flag_b = reinterpret_cast<uint64_t*>(b.dst);
    cudaSetDevice(b.device);
    const OpCount ops{config.warmup, config.iterations};
    round_trip_kernel<Policy, Inline><<<1, 1, 0, b.stream>>>(
        b.qp->handle(), RoundTripSide{1, b.src, b.src_mr.lkey, flag_b, flag_a, a.dst_mr.rkey}, ops,
        pair.samples);
    check_cuda(cudaGetLastError(), "launch round trip (PE 1)");
    cudaSetDevice(a.device);
    round_trip_kernel<Policy, Inline><<<1, 1, 0, a.stream>>>(
        a.qp->handle(), RoundTripSide{0, a.src, a.src_mr.lkey, flag_a, flag_b, b.dst_mr.rkey}, ops,
        pair.samples);
    check_cuda(cudaGetLastError(), "launch round trip (PE 0)");
    wait(a.stream, pair, "round trip PE 0");
    wait(b.stream, pair, "round trip PE 1");
    HostSamples s;
    if (!read_run(pair, run, t, config.iterations, describe_kernel_status, &s)) return;
    add_run(rtt, s.a.data(), config.iterations, s.timer);
    // Payload: both flags hold the last value.
    uint64_t fa = 0, fb = 0;
    check_cuda(cudaMemcpyAsync(&fa, flag_a, 8, cudaMemcpyDefault, a.stream), "flag");
    check_cuda(cudaMemcpyAsync(&fb, flag_b, 8, cudaMemcpyDefault, a.stream), "flag");
    check_cuda(cudaStreamSynchronize(a.stream), "flag");
    const uint64_t last = config.warmup + config.iterations;
    t.valid = t.valid && fa == last && fb == last;
  });
  result.metrics = {rtt};
  result.note += tally.note;
  result.payload_validated = tally.valid && tally.recorded > 0;
  result.sm_clock_mhz = tally.mean_clock_mhz();
}

template <typename Policy>
void single_operation_with(const PePairConfig& config,
                           std::vector<gpu::Measurement>& out) {
  for (const bool is_inline : {true, false}) {
    const char* variant = is_inline ? "inline" : "pointer";
    gpu::Measurement r = base_result(config, "latency", variant, Policy::key, 8, is_inline);
    if (is_inline) measure_put_latency<Policy, Payload::inline_value>(config, 8, r);
    else measure_put_latency<Policy, Payload::pointer>(config, 8, r);
    gpu::Measurement rt = base_result(config, "latency", variant, Policy::key, 8, is_inline);
    if (is_inline) measure_round_trip<Policy, true>(config, rt);
    else measure_round_trip<Policy, false>(config, rt);
    r.metrics.push_back(rt.metrics.at(0));
    r.payload_validated = r.payload_validated && rt.payload_validated;
    r.note += std::string(is_inline ? "8 B from a register (put_value)" : "8 B from a source buffer") +
              ", QP counters in registers (gda::OwnedQp)" + (rt.note.empty() ? "" : "; " + rt.note);
    out.push_back(std::move(r));
  }
  // The same puts with the counters read from SendQueueState on every reservation: what the
  // register copy saves (a dependent load of resv_head, and of cons_idx once the ring wraps).
  for (const bool is_inline : {true, false}) {
    const std::string variant = std::string(is_inline ? "inline" : "pointer") + ", counters in memory";
    gpu::Measurement r = base_result(config, "latency", variant, Policy::key, 8, is_inline);
    if (is_inline) measure_put_latency<Policy, Payload::inline_value, Counters::memory>(config, 8, r);
    else measure_put_latency<Policy, Payload::pointer, Counters::memory>(config, 8, r);
    r.note += "QP counters read from SendQueueState at every reservation";
    out.push_back(std::move(r));
  }
}

// --transport dc: the inline and pointer puts again from a DCI (dc_latency.cuh), each row beside
// the RC row of the same payload (out[0] inline, out[1] pointer: counters in registers, as here).
template <typename Policy>
void dc_single_operation_with(const PePairConfig& config, std::vector<gpu::Measurement>& out) {
  for (const bool is_inline : {true, false}) {
    const std::string variant = std::string("dc ") + (is_inline ? "inline" : "pointer") + ", " + config.dc_av + " AV";
    gpu::Measurement r = base_result(config, "latency", variant, Policy::key, 8, is_inline);
    if (is_inline) measure_dc_put_latency<Policy, Payload::inline_value>(config, r);
    else measure_dc_put_latency<Policy, Payload::pointer>(config, r);
    r.note += std::string(is_inline ? "8 B from a register (put_value_dc)" : "8 B from a source buffer (put_dc)") +
              ", DCI to a DCT of PE 1, QP counters in registers (gda::OwnedQp); no round trip";
    out.push_back(std::move(r));
  }
}

}  // namespace gpu

namespace {

// Row i's transport knobs; a DC row also gets its put+completion above the RC row of its payload
// (measured in this call) and the profile's DC connect with where its value comes from.
void label_transport(std::vector<Result>& results, const std::vector<gpu::Measurement>& rows,
                     const PePairConfig& config) {
  const softnic::TimingProfile profile = softnic::timing_profile(config.nic_profile);
  for (size_t i = 0; i < results.size(); ++i) {
    const bool dc = rows[i].variant.rfind("dc ", 0) == 0;
    results[i].knobs.push_back({"transport", dc ? "dc" : "rc"});
    if (!dc) continue;
    results[i].knobs.push_back({"dc_av", config.dc_av});
    const std::string name = softnic::profile_name(profile);
    std::string connect = std::to_string(profile.dc_connect_ns) + " ns (" + name;
    if (name == "cx7-ib") {
      connect += ": FITTED to the paper's 0.45 us DC-RC put+completion difference (§4.3.3), not predicted";
    } else if (profile.enabled == 0) {
      connect += ": adds nothing";
    } else {
      connect += " profile file";
    }
    results[i].knobs.push_back({"dc_connect_ns", connect + ")"});
    const gpu::Measurement& rc = rows[rows[i].inline_payload ? 0 : 1];
    if (rc.metrics.size() < 2 || rows[i].metrics.size() < 2) continue;
    char above[64];
    std::snprintf(above, sizeof above, "%.3f",
                  (gpu::summary_p50(rows[i].metrics[1]) - gpu::summary_p50(rc.metrics[1])) / 1e3);
    results[i].knobs.push_back({"dc_minus_rc_put_completion_us", std::string(above) + " (vs '" + rc.variant + "')"});
  }
}

template <typename Policy>
std::vector<gpu::Measurement> single_operation_rows(const PePairConfig& config) {
  std::vector<gpu::Measurement> out;
  gpu::single_operation_with<Policy>(config, out);
  if (config.transport == "dc") gpu::dc_single_operation_with<Policy>(config, out);
  return out;
}

std::vector<Result> run_single_operation(const PePairConfig& config) {
  if (config.path != "mini-gda") return to_results(run_peer_single_operation(config), config);  // --path
  // Per ordering: inline and pointer, each a put and a round trip, then both with counters in
  // memory; with --transport dc the DCI's inline and pointer puts after them.
  config.progress.plan((config.transport == "dc" ? 8 : 6) * size_t{config.runs});
  const std::vector<gpu::Measurement> out =
      gpu::engine_needs_system_scope(config)
          ? single_operation_rows<gda::ordering::system_release_store>(config)
          : single_operation_rows<gda::ordering::gpu_fence>(config);
  std::vector<Result> results = to_results(out, config);
  label_transport(results, out, config);
  return results;
}

int run_gpu_latency(const Arguments& a, Report& r) {
  GpuCommand command{&run_single_operation, /*takes_path=*/true};
  command.takes_transport = true;
  return run_gpu_experiment(a, r, command);
}

const bool registered = register_experiment(
    {"gpu-latency", "one GPU thread: issue, put+completion, round trip of one 8 B put (Table 3); --path mini-gda|gdaki|nvshmem-ibgda; --transport dc: DC puts beside",
     run_gpu_latency, true});

}  // namespace

}  // namespace dissect::bench
