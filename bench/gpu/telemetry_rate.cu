// The GPU path's message rate with telemetry compiled out, off, and on at N = 1, 4, 16, 64, in one
// run of one binary: at N = 16 it should stay within 5 % of off, and off within noise of compiled
// out, measured this way.
//
// One GPU thread posts 8 B RDMA writes in batches of 16 per doorbell (only the last signalled),
// keeping at most WINDOW WQEs in flight, through the softnic GPU engine. Every variant drives the
// same QP. "compiled out" is the submit path of a bare ordering (no hook at all: what every other
// experiment runs); the others are gda::counted<ordering>, with the handle's telemetry slot null
// (off: one branch per hook) or a counter block and post stamps in GPU memory configured for N,
// exactly what GpuQpSlot hands a kernel. The process's telemetry setting plays no part, so one
// binary measures every variant. Variants are interleaved within each run, so drift hits them
// alike.
//
// Metrics per variant: wall ns per message over the timed messages (%globaltimer), and the issue
// cycles per message (post_writes alone, clock64, converted with the run's effective SM clock).
// After every kernel the block is read back: num_wqe_sent and num_wqe_completed must equal the
// messages posted, and the latency histogram must hold exactly the sampled WQEs.
#include <cstdio>
#include <iterator>

#include "dissect/nic/qp_counters.h"
#include "harness.cuh"
#include "gpu_command.h"
#include "to_report.h"

namespace dissect::bench {
namespace gpu {
namespace {

constexpr uint32_t BATCH = 16;
constexpr uint32_t WINDOW = 128;  // of the pair's 256-WQEBB ring
constexpr uint32_t BYTES = 8;

struct RateOut {
  unsigned long long ns;            // globaltimer over the timed messages
  unsigned long long cycles;        // clock64 over the same span
  unsigned long long issue_cycles;  // inside post_writes only
  uint32_t status;
};

// What telemetry_rate_kernel streams: BATCH writes a doorbell from the source slots to the
// destination slots, `warmup` untimed messages then `messages` timed ones.
struct TelemetryRateArgs {
  nic::QpHandle qp;
  uint8_t* src;
  uint32_t lkey;
  uint8_t* dst;
  uint32_t rkey;
  uint64_t warmup;
  uint64_t messages;
  RateOut* out;
};

template <typename Policy>
__global__ void telemetry_rate_kernel(TelemetryRateArgs args) {
  nic::QpHandle qp = args.qp;
  uint8_t* const src = args.src;
  uint8_t* const dst = args.dst;
  const uint32_t lkey = args.lkey, rkey = args.rkey;
  const uint64_t warmup = args.warmup, messages = args.messages;
  RateOut* const out = args.out;
  gda::WriteRequest requests[BATCH];
  for (uint32_t k = 0; k < BATCH; ++k) {
    requests[k] = gda::WriteRequest{reinterpret_cast<uint64_t>(src + size_t{k} * SLOT), lkey, BYTES,
                                    reinterpret_cast<uint64_t>(dst + size_t{k} * SLOT), rkey};
  }
  uint32_t status = 0;
  uint64_t end = 0, g0 = now_ns();
  long long c0 = clock64(), issue = 0;
  for (uint64_t sent = 0; sent < warmup + messages && status == 0; sent += BATCH) {
    if (sent == warmup) {
      status = static_cast<uint32_t>(gda::wait_completion<Policy, gda::Sharing::exclusive>(qp, end));
      g0 = now_ns();
      c0 = clock64();
      issue = 0;
    }
    const long long ca = clock64();
    if (status == 0) status = static_cast<uint32_t>(gda::post_writes<Policy>(qp, requests, BATCH, &end));
    issue += clock64() - ca;
    if (status == 0 && end > WINDOW) {
      status = static_cast<uint32_t>(
          gda::wait_completion<Policy, gda::Sharing::exclusive>(qp, end - WINDOW));
    }
  }
  if (status == 0) status = static_cast<uint32_t>(gda::wait_completion<Policy, gda::Sharing::exclusive>(qp, end));
  out->cycles = static_cast<unsigned long long>(clock64() - c0);
  out->ns = now_ns() - g0;
  out->issue_cycles = static_cast<unsigned long long>(issue);
  out->status = status;
}

struct Variant {
  const char* name;
  uint64_t n;    // 0 = telemetry off (null slot)
  bool counted;  // the hooks compiled in (gda::counted)
  telemetry::QpCounters* block = nullptr;
  gpu::TimedMetric wall{"ns per message", {}, {}, {}};
  gpu::TimedMetric issue{"issue ns per message", {}, {}, {}};
  std::string problems;
};

void add_value(gpu::TimedMetric& metric, double value) {
  metric.p10_ns.push_back(value);
  metric.p50_ns.push_back(value);
  metric.p90_ns.push_back(value);
}

// The block's counts must equal what the kernel sent; returns what is wrong, or "".
std::string check_block(const telemetry::QpCounters& c, uint64_t sent) {
  uint64_t histogram = 0;
  for (uint32_t b = 0; b < c.histogram_buckets; ++b) histogram += c.wqe_completion_histogram[b];
  const uint64_t expected_sampled = (sent + c.sample_mask) / (c.sample_mask + 1);  // 1-WQEBB WQEs
  std::string wrong;
  auto expect = [&](const char* what, uint64_t got, uint64_t want) {
    if (got != want) wrong += std::string(what) + " " + std::to_string(got) + " != " + std::to_string(want) + "; ";
  };
  expect("num_wqe_sent", c.num_wqe_sent, sent);
  expect("num_wqe_completed", c.num_wqe_completed, sent);
  expect("tx_bytes", c.tx_bytes, sent * BYTES);
  expect("num_doorbells", c.num_doorbells, sent / BATCH);
  expect("sampled", histogram, expected_sampled);
  return wrong;
}

template <typename Policy>
std::vector<gpu::Measurement> measure(const PePairConfig& config) {
  const uint64_t messages = uint64_t{config.iterations} * 256 / BATCH * BATCH;
  const uint64_t warmup = uint64_t{config.warmup} * BATCH;
  Variant variants[] = {{"compiled out", 0, false}, {"off", 0, true}, {"N=1", 1, true},
                        {"N=4", 4, true},           {"N=16", 16, true}, {"N=64", 64, true}};
  const void* const bare = reinterpret_cast<const void*>(&telemetry_rate_kernel<Policy>);
  const void* const counted =
      reinterpret_cast<const void*>(&telemetry_rate_kernel<gda::counted<Policy>>);
  auto pair = make_pair(config, 1);
  auto& a = pair->pe[0];
  auto& b = pair->pe[1];
  const nic::QpHandle plain = a.qp->handle();
  const uint32_t wqebbs = 256;  // make_pair's send queue
  const size_t block_bytes = sizeof(telemetry::QpCounters) + wqebbs * sizeof(uint64_t);
  // Allocation with the engine stopped: nothing then races the control path.
  for (auto& n : pair->nics) n->stop();
  for (Variant& v : variants) {
    if (v.n != 0) v.block = static_cast<telemetry::QpCounters*>(a.nic->allocate(block_bytes, nic::Placement::gpu));
  }
  RateOut* out = static_cast<RateOut*>(a.nic->allocate(sizeof(RateOut), nic::Placement::gpu));
  for (auto& n : pair->nics) n->start();
  cudaSetDevice(a.device);
  softnic::preload_kernel(bare, "telemetry rate kernel (compiled out)");
  softnic::preload_kernel(counted, "telemetry rate kernel (counted)");
  double clock_sum = 0;
  config.progress.plan(std::size(variants) * config.runs);
  for (uint32_t run = 0; run < config.runs; ++run) {
    for (Variant& v : variants) {
      config.progress.measuring(std::string("telemetry-rate ") + v.name);
      nic::QpHandle qp = plain;
      if (v.block != nullptr) {
        telemetry::QpCounters fresh;
        telemetry::initialise_counters(fresh, plain.qpn, telemetry::HistogramShape{5, 30000, v.n});
        check_cuda(cudaMemcpyAsync(v.block, &fresh, sizeof fresh, cudaMemcpyHostToDevice, a.stream), "block");
        nic::attach_telemetry(qp, v.block, reinterpret_cast<uint64_t*>(v.block + 1), fresh.sample_mask);
      }
      TelemetryRateArgs launch{qp, a.src, a.src_mr.lkey, b.dst, b.dst_mr.rkey, warmup, messages, out};
      void* args[] = {&launch};
      check_cuda(cudaLaunchKernel(v.counted ? counted : bare, dim3(1), dim3(1), args, 0, a.stream),
                 "launch telemetry_rate_kernel");
      wait(a.stream, *pair, "telemetry rate kernel", 60);
      RateOut h{};
      check_cuda(cudaMemcpyAsync(&h, out, sizeof h, cudaMemcpyDeviceToHost, a.stream), "result");
      check_cuda(cudaStreamSynchronize(a.stream), "result");
      config.progress.run_done(run);
      if (h.status != 0) {
        v.problems += "run " + std::to_string(run) + ": device status " + std::to_string(h.status) + "; ";
        continue;
      }
      const double mhz = h.ns ? double(h.cycles) * 1e3 / double(h.ns) : 0;
      clock_sum += mhz;
      add_value(v.wall, double(h.ns) / double(messages));
      add_value(v.issue, mhz > 0 ? double(h.issue_cycles) * 1e3 / mhz / double(messages) : 0);
      if (v.block != nullptr) {
        telemetry::QpCounters c;
        check_cuda(cudaMemcpyAsync(&c, v.block, sizeof c, cudaMemcpyDeviceToHost, a.stream), "counters");
        check_cuda(cudaStreamSynchronize(a.stream), "counters");
        v.problems += check_block(c, warmup + messages);
      }
    }
  }
  const double out_ns = summary_p50(variants[0].wall);
  const double off_ns = summary_p50(variants[1].wall);
  std::vector<gpu::Measurement> results;
  for (Variant& v : variants) {
    gpu::Measurement r = base_result(config, "telemetry-rate", v.name, Policy::key, BYTES, false);
    r.metrics = {v.wall, v.issue};
    r.sm_clock_mhz = clock_sum / std::max<size_t>(1, config.runs * std::size(variants));
    r.payload_validated = v.problems.empty() && !v.wall.p50_ns.empty();
    const double ns = summary_p50(v.wall);
    char line[200];
    std::snprintf(line, sizeof line,
                  "batch %u, window %u, %llu msgs/run, hooks %s: %.2f Mmsg/s (p50), %+.1f %% vs "
                  "off, %+.1f %% vs compiled out",
                  BATCH, WINDOW, static_cast<unsigned long long>(messages),
                  v.counted ? "compiled in" : "compiled out", ns > 0 ? 1e3 / ns : 0,
                  off_ns > 0 && ns > 0 ? (off_ns / ns - 1) * 100 : 0,
                  out_ns > 0 && ns > 0 ? (out_ns / ns - 1) * 100 : 0);
    r.note = line + (v.problems.empty() ? std::string() : "; " + v.problems);
    results.push_back(r);
  }
  return results;
}

}  // namespace
}  // namespace gpu

namespace {

std::vector<Result> run_gpu_telemetry_rate(const PePairConfig& config) {
  if (gpu::engine_needs_system_scope(config)) {
    return to_results(gpu::measure<gda::ordering::system_release_store>(config), config);
  }
  return to_results(gpu::measure<gda::ordering::gpu_fence>(config), config);
}

int run_gpu_telemetry(const Arguments& a, Report& r) {
  return run_gpu_experiment(a, r, {&run_gpu_telemetry_rate, false, nullptr, /*per_sample=*/false});
}

const bool registered = register_experiment(
    {"gpu-telemetry-rate", "one GPU thread, 8 B writes, 16 per doorbell: rate and issue time with telemetry compiled out, off and at N = 1, 4, 16, 64",
     run_gpu_telemetry, true});

}  // namespace

}  // namespace dissect::bench
