#include "harness.cuh"

#include <cstring>
#include <map>
#include <mutex>

#include "dissect/common/wait.h"

namespace dissect::bench::gpu {

PePair::~PePair() {
  // Stop first: cudaFree may synchronise the device, which never returns behind an engine.
  for (auto& n : nics) n->stop();
  for (auto& p : pe) {
    p.qp.reset();
    if (p.stream) cudaStreamDestroy(p.stream);
  }
  cudaSetDevice(pe[0].device);
  cudaFree(samples.a);
  cudaFree(samples.b);
  cudaFree(samples.timer);
  cudaFree(samples.status);
}

std::unique_ptr<PePair> make_pair(const PePairConfig& config, uint32_t iterations) {
  if (softnic::gpu_runtime_init() == 0) throw std::runtime_error("no CUDA device");
  const bool two = config.pe_layout == "two-gpus";
  // Measured (once, cached) before this pair's engines start, so the step kernel's 200,000 timer
  // reads never share the GPU with an engine; it is safe beside one, but quieter alone.
  for (int d = 0; d < (two ? 2 : 1); ++d) measure_globaltimer_step(config.device + d);
  auto pair = std::make_unique<PePair>();
  const auto engine = config.engine == "host-thread" ? softnic::EngineKind::host_thread
                                                     : softnic::EngineKind::gpu_kernel;
  const auto placement = nic::placement_from_string(config.placement);
  for (int d = 0; d < (two ? 2 : 1); ++d) {
    softnic::SoftNicOptions o = softnic::gpu_engine_options();
    o.device = config.device + d;
    o.engine = engine;
    o.engine_ctas = config.engine_ctas;
    o.engine_warps_per_cta = config.engine_warps_per_cta;
    o.profile = softnic::timing_profile(config.nic_profile);
    o.start_engine = false;  // allocate everything first; start at the end
    pair->nics.push_back(std::make_unique<softnic::SoftNic>(o));
  }
  if (two && !softnic::enable_peer_access(config.device, config.device + 1)) {
    throw std::runtime_error("two-gpus layout: no peer access between the devices");
  }
  nic::QpAttributes attributes;
  attributes.sq_wqebbs = 256;
  attributes.max_inline = 220;
  attributes.placement = placement;
  // NVSHMEM's IBGDA polls a collapsed send CQ (entry 0 only), as it creates its own.
  attributes.send_cq_collapsed = config.path == "nvshmem-ibgda";
  pair->buffer_bytes = size_t{SLOTS} * SLOT;
  for (int i = 0; i < 2; ++i) {
    auto& p = pair->pe[i];
    open_pe(p, pair->nics[two ? i : 0].get(), attributes, pair->buffer_bytes);
    p.device = p.nic->device();
    cudaSetDevice(p.device);
    check_cuda(cudaStreamCreateWithFlags(&p.stream, cudaStreamNonBlocking), "stream");
  }
  connect_pes(pair->pe[0], pair->pe[1]);
  cudaSetDevice(pair->pe[0].device);
  const size_t n = std::max<uint32_t>(iterations, 1);
  check_cuda(cudaMalloc(&pair->samples.a, n * sizeof(unsigned long long)), "samples");
  check_cuda(cudaMalloc(&pair->samples.b, n * sizeof(unsigned long long)), "samples");
  check_cuda(cudaMalloc(&pair->samples.timer, sizeof(Timer)), "timer");
  check_cuda(cudaMalloc(&pair->samples.status, 64), "status");
  for (auto& n : pair->nics) n->start();
  return pair;
}

HostSamples read_samples(const PePair& pair, uint32_t n) {
  HostSamples h;
  h.a.resize(n);
  h.b.resize(n);
  cudaStream_t s = pair.pe[0].stream;
  cudaSetDevice(pair.pe[0].device);
  check_cuda(cudaMemcpyAsync(h.a.data(), pair.samples.a, n * 8, cudaMemcpyDeviceToHost, s), "read a");
  check_cuda(cudaMemcpyAsync(h.b.data(), pair.samples.b, n * 8, cudaMemcpyDeviceToHost, s), "read b");
  check_cuda(cudaMemcpyAsync(&h.timer, pair.samples.timer, sizeof(Timer), cudaMemcpyDeviceToHost, s), "timer");
  check_cuda(cudaMemcpyAsync(&h.status, pair.samples.status, 4, cudaMemcpyDeviceToHost, s), "status");
  check_cuda(cudaStreamSynchronize(s), "read samples");
  return h;
}

void reset_status(const PePair& pair) {
  cudaSetDevice(pair.pe[0].device);
  static const uint32_t unset = 0xffffffffu;  // a copy, not a memset kernel, beside the engine
  check_cuda(cudaMemcpyAsync(pair.samples.status, &unset, 4, cudaMemcpyHostToDevice, pair.pe[0].stream),
        "reset status");
  check_cuda(cudaStreamSynchronize(pair.pe[0].stream), "reset status");
}

namespace {

// Where the step kernel leaves its result: one word per device in the module's static memory, so
// a measurement allocates and frees nothing (cudaFree never returns behind a running engine).
__device__ unsigned long long globaltimer_step_result;

__global__ void globaltimer_step_kernel() {
  unsigned long long best = ~0ull;
  uint64_t last = now_ns();
  for (int i = 0; i < 200000; ++i) {
    const uint64_t t = now_ns();
    if (t != last) {
      if (t - last < best) best = t - last;
      last = t;
    }
  }
  globaltimer_step_result = best;
}

// Safe beside a running engine: a kernel and a copy on a private non-blocking stream, waited for
// with cudaStreamSynchronize (never the device), and no allocation.
double measure_globaltimer_step_now(int device) {
  cudaSetDevice(device);
  cudaStream_t s;
  check_cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "step stream");
  globaltimer_step_kernel<<<1, 1, 0, s>>>();
  cudaError_t e = cudaGetLastError();
  unsigned long long h = 0;
  if (e == cudaSuccess) {
    e = cudaMemcpyFromSymbolAsync(&h, globaltimer_step_result, sizeof h, 0,
                                  cudaMemcpyDeviceToHost, s);
  }
  if (e == cudaSuccess) e = cudaStreamSynchronize(s);
  cudaStreamDestroy(s);
  check_cuda(e, "globaltimer step kernel");
  return static_cast<double>(h);
}

}  // namespace

// Cached per device: the step is the timer's resolution, fixed for the process, and base_result
// asks for it for every result, each measurement costing a 200,000-read kernel.
double measure_globaltimer_step(int device) {
  static std::mutex lock;
  static std::map<int, double> steps;
  std::lock_guard<std::mutex> guard(lock);
  auto it = steps.find(device);
  if (it == steps.end()) it = steps.emplace(device, measure_globaltimer_step_now(device)).first;
  return it->second;
}

// The bound is common/wait.h's BoundedWait (over()); between queries this wait sleeps 100 us, as
// it always did, rather than spin in expired()'s Backoff, which would also count it in the spin census.
void wait_for_stream(cudaStream_t stream, const std::string& what, double seconds,
                     const std::function<std::string()>& describe) {
  BoundedWait bound(static_cast<uint64_t>(seconds * 1e9));
  for (;;) {
    const cudaError_t q = cudaStreamQuery(stream);
    if (q == cudaSuccess) return;
    if (q != cudaErrorNotReady) {
      throw std::runtime_error(what + " failed: " + cudaGetErrorString(q) + "; " + describe());
    }
    if (bound.over()) {
      throw std::runtime_error(what + " did not finish in " + std::to_string(seconds) + " s; " + describe());
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

void wait_for_stream(cudaStream_t stream, const softnic::SoftNic& nic, const char* what,
                     double seconds) {
  wait_for_stream(stream, what, seconds, [&] { return nic.describe_status(); });
}

void wait(cudaStream_t stream, const PePair& pair, const char* what, double seconds) {
  wait_for_stream(stream, *pair.pe[0].nic, what, seconds);
}

Percentiles percentiles(std::vector<double> v) {
  if (v.empty()) return {0, 0, 0};
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[std::min(v.size() - 1, static_cast<size_t>(q * (v.size() - 1) + 0.5))]; };
  return {at(0.10), at(0.50), at(0.90)};
}

std::vector<double> to_ns(const unsigned long long* cycles, uint32_t n, const Timer& timer) {
  const double mhz = clock_mhz(timer);
  std::vector<double> out(n);
  for (uint32_t i = 0; i < n; ++i) out[i] = mhz > 0 ? double(cycles[i]) * 1e3 / mhz : 0;
  return out;
}

void add_run(gpu::TimedMetric& metric, const std::vector<double>& ns) {
  const Percentiles p = percentiles(ns);
  metric.p10_ns.push_back(p.p10);
  metric.p50_ns.push_back(p.p50);
  metric.p90_ns.push_back(p.p90);
  if (keep_gpu_samples()) metric.samples_ns.push_back(ns);
}

void add_run(gpu::TimedMetric& metric, const unsigned long long* cycles, uint32_t n, const Timer& timer) {
  add_run(metric, to_ns(cycles, n, timer));
  const Percentiles p = percentiles(std::vector<double>(cycles, cycles + n));
  metric.p10_cycles.push_back(p.p10);
  metric.p50_cycles.push_back(p.p50);
  metric.p90_cycles.push_back(p.p90);
}

bool validate_slots(const uint8_t* dst, uint32_t total_ops, uint32_t length, cudaStream_t stream) {
  std::vector<uint8_t> h(size_t{SLOTS} * SLOT);
  check_cuda(cudaMemcpyAsync(h.data(), dst, h.size(), cudaMemcpyDefault, stream), "read payload");
  check_cuda(cudaStreamSynchronize(stream), "read payload");
  for (uint32_t slot = 0; slot < SLOTS && slot < total_ops; ++slot) {
    // The last op that wrote this slot.
    const uint32_t last = slot + ((total_ops - 1 - slot) / SLOTS) * SLOTS;
    for (uint32_t b = 0; b < length; ++b) {
      if (h[size_t{slot} * SLOT + b] != payload_byte(last, b)) return false;
    }
  }
  return true;
}

void record_cqe_lateness(const softnic::SoftNic& nic, uint32_t qpn, bool pointer, uint32_t connects,
                         cudaStream_t stream, TimedMetric& late) {
  const softnic::TimingProfile& p = nic.profile();
  if (p.enabled == 0) return;
  const softnic::QpContext qp = nic.qp_context(qpn);
  std::vector<mlx5::mlx5_cqe64> cqes(qp.send_cq.cqe_count);
  check_cuda(cudaMemcpyAsync(cqes.data(), qp.send_cq.cqes, cqes.size() * sizeof(mlx5::mlx5_cqe64),
                             cudaMemcpyDefault, stream),
             "read the send CQ");
  check_cuda(cudaStreamSynchronize(stream), "read the send CQ");
  const std::vector<double> ns = cqe_lateness_ns(cqes, p, pointer, connects);
  if (ns.empty()) return;
  add_run(late, ns);
  late.samples_per_run = ns.size();
}

gpu::Measurement base_result(const PePairConfig& config, const char* name,
                                const std::string& variant, const char* ordering,
                                uint32_t bytes, bool is_inline) {
  gpu::Measurement r;
  r.name = name;
  r.variant = variant;
  r.engine = config.engine;
  r.placement = config.placement;
  r.pe_layout = config.pe_layout;
  r.ordering = ordering;
  r.payload_bytes = bytes;
  r.inline_payload = is_inline;
  r.globaltimer_step_ns = measure_globaltimer_step(config.device);
  config.progress.measuring(std::string(name) + " " + variant);
  return r;
}

}  // namespace dissect::bench::gpu

namespace dissect::bench {

std::string gpu_device_name(int device) {
  cudaDeviceProp properties{};
  if (cudaGetDeviceProperties(&properties, device) != cudaSuccess) return "";
  return properties.name;
}

}  // namespace dissect::bench
