// gpu-load, mini-proxy: one run of one point (load_proxy_kernel.cuh) on T host workers and the
// softnic host engine (proxy_cuda_rig.h): the rig, the launch, the window read back and the
// payload validated (every background destination word holds its producer's last count, both
// probe landing words the last request).
#include <algorithm>
#include <string>
#include <vector>

#include "dissect/bench/proxy_cuda_rig.h"
#include "dissect/proxy/handoff.h"
#include "harness.cuh"
#include "load_proxy_kernel.cuh"
#include "load.h"

namespace dissect::bench::gpu {
namespace {

using namespace proxy_load;

// Device memory for one run, freed after it (no GPU engine runs beside this rig).
struct DeviceScratch {
  std::vector<void*> blocks;
  void* get(size_t bytes) {
    void* p = nullptr;
    check_cuda(cudaMalloc(&p, std::max<size_t>(bytes, 8)), "gpu-load (mini-proxy): device memory");
    check_cuda(cudaMemset(p, 0, std::max<size_t>(bytes, 8)), "gpu-load (mini-proxy): device memory");
    blocks.push_back(p);
    return p;
  }
  ~DeviceScratch() {
    for (void* p : blocks) cudaFree(p);
  }
};

template <typename T>
std::vector<T> read_back(const T* device, size_t n, cudaStream_t stream) {
  std::vector<T> out(n);
  check_cuda(cudaMemcpyAsync(out.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost, stream), "gpu-load read-back");
  check_cuda(cudaStreamSynchronize(stream), "gpu-load read-back");
  return out;
}

bool payload_valid(const proxy::cuda::GpuProxyRig& rig, const QueueLayout& l,
                   const std::vector<unsigned long long>& posted, uint64_t last_request) {
  const auto* a = reinterpret_cast<const uint64_t*>(rig.a.host);
  const auto* b = reinterpret_cast<const uint64_t*>(rig.b.host);
  for (uint32_t p = 0; p < 2 * l.producers; ++p) {
    const uint64_t* destination = p < l.producers ? b : a;  // A's producers write into B
    if (posted[p] != 0 && destination[background_word(p)] != posted[p]) return false;
  }
  return a[PROXY_LOAD_LANDING] == last_request && b[PROXY_LOAD_LANDING] == last_request;
}

}  // namespace

LoadRun run_proxy_load(const LoadConfig& c, const QueueLayout& l) {
  const uint32_t producers = 2 * l.producers;
  const size_t words = PROXY_LOAD_BACKGROUND + size_t{std::max(1u, producers)} * 8;
  proxy::cuda::GpuProxyRig rig(proxy::cuda::tuned_gpu_proxy(c.workers, l.queues(), c.proxy_batch, c.ring_entries),
                               words * 8, proxy::cuda::CounterPlacement::host, c.device,
                               proxy::cuda::engine_per_worker(c.workers, c.nic_profile), c.worker_sq_wqebbs);
  DeviceScratch scratch;
  ProxyLoadArgs args{};
  const std::vector<proxy::RingHandle> rings = rig.producer_rings();
  auto* device_rings = static_cast<proxy::RingHandle*>(scratch.get(sizeof(proxy::RingHandle) * rings.size()));
  check_cuda(cudaMemcpy(device_rings, rings.data(), sizeof(proxy::RingHandle) * rings.size(), cudaMemcpyHostToDevice),
             "gpu-load (mini-proxy): ring handles");
  args.rings = device_rings;
  args.layout = l;
  args.a = reinterpret_cast<uint64_t*>(rig.a.device);
  args.b = reinterpret_cast<uint64_t*>(rig.b.device);
  args.pace_period_ns = pace_period_ns(c.pace_mmsgs, producers, 1);
  args.probe = probe_plan(c, l, [&](size_t bytes) { return scratch.get(bytes); });
  args.posted = static_cast<unsigned long long*>(scratch.get(8 * size_t{std::max(1u, producers)}));
  args.failure = static_cast<uint32_t*>(scratch.get(16));
  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "gpu-load (mini-proxy): stream");
  rig.proxy->start();

  const bool shared = l.submitters_on(l.probe(0)) > 1;
  if (shared) proxy_load_kernel<proxy::Sharing::shared><<<2 + producers, 1, 0, stream>>>(args);
  else proxy_load_kernel<proxy::Sharing::exclusive><<<2 + producers, 1, 0, stream>>>(args);
  check_cuda(cudaGetLastError(), "launch proxy_load_kernel");
  LoadRun run;
  run.placement = rig.placement();
  try {
    wait_for_stream(stream, "gpu-load (mini-proxy): the probe and background kernel", 60 + (c.ramp_ns + c.budget_ns) / 1e9,
                    [&] { return "\n" + rig.state(); });
  } catch (...) {
    cudaStreamDestroy(stream);
    throw;
  }
  const ProbeWindow w = read_back(args.probe.window, 1, stream)[0];
  const std::vector<uint32_t> failure = read_back(args.failure, 2, stream);
  const std::vector<unsigned long long> cycles = read_back(args.probe.round_trip, w.samples, stream);
  const std::vector<unsigned long long> posted = read_back(args.posted, std::max(1u, producers), stream);
  cudaStreamDestroy(stream);
  const proxy::ShutdownReport report = rig.proxy->stop(proxy::StopMode::drain);
  uint64_t descriptors = 0, posts = 0, passes = 0, busy = 0, full = 0;
  for (const proxy::WorkerStats& s : rig.proxy->stats()) {
    descriptors += s.descriptors, posts += s.posts, passes += s.passes, busy += s.busy_passes, full += s.full_passes;
  }
  run.descriptors_per_post = posts ? double(descriptors) / double(posts) : 0;
  run.worker_busy_percent = passes ? 100.0 * double(busy) / double(passes) : 0;
  run.worker_full_percent = passes ? 100.0 * double(full) / double(passes) : 0;
  if (failure[0] != 0 || w.status != CAUSE_NONE) {
    run.failure = "ring " + std::to_string(failure[0] ? failure[1] : l.probe(0)) + ": " +
                  probe_status_text(failure[0] ? failure[0] : w.status) + " failed";
    return run;
  }
  run.sm_clock_mhz = clock_mhz(w.timer);
  for (unsigned long long cy : cycles) run.round_trip_us.push_back(cy / run.sm_clock_mhz);
  const uint64_t window_ns = w.end_ns - w.start_ns;
  run.window_ms = window_ns / 1e6;
  // A shared probe's ring counts its own requests too; without background there is nothing to carry
  // (the responder's last reply may complete on either side of the window's edges).
  run.background_mmsgs = l.producers ? carried_mmsgs(w.completed_start, w.completed_end, 2ull * w.samples,
                                                     !l.reserved_probe, window_ns)
                                     : 0;
  run.valid = w.samples > 0 && report.drained && payload_valid(rig, l, posted, uint64_t{c.warmup} + w.samples);
  if (!report.drained) run.failure = "proxy not drained: " + report.describe();
  else if (!run.valid) run.failure = "payload: a background word or a probe landing word does not hold its last value";
  return run;
}

}  // namespace dissect::bench::gpu
