#include "moe_rig.h"

#include <algorithm>
#include <stdexcept>

#include "dissect/common/cuda.h"
#include "dissect/gda/ordering.h"
#include "dissect/moe/combine.h"
#include "dissect/moe/dispatch.h"
#include "dissect/moe/group.h"
#include "dissect/bench/proxy_cuda_rig.h"
#include "dissect/moe/transport_gda.h"
#include "dissect/moe/transport_proxy.h"
#include "harness.cuh"

namespace dissect::bench::gpu {
namespace {

// GPU-scope release stores (DeepEP's st.release.gpu): the engine is a kernel on this GPU, and the
// queues and arenas are in its memory, so GPU scope orders the WQE before the doorbell for it.
using GdaTransport = moe::GdaTransport<gda::ordering::gpu_release_store>;
// A ConnectX (--provider mlx5): the NIC reads the WQEs from GPU memory after the doorbell record
// (pinned host memory) and the UAR store (or a host forwarder's, cpu-assisted), all outside the
// GPU, so the stores before them are released at system scope (st.release.sys; nic.h).
using GdaSystemTransport = moe::GdaTransport<gda::ordering::system_release_store>;
using moe::ProxyTransport;

__device__ void note_failure(uint32_t* failure, gda::Status s) {
  if (s != gda::Status::ok && (threadIdx.x & 31) == 0) atomicCAS(failure, 0u, static_cast<uint32_t>(s));
}

struct WarpPlace {
  const moe::MoeRankHandle* h;
  uint32_t warp, warps;
};
__device__ WarpPlace place(const moe::MoeRankHandle* handles, uint32_t ctas_per_rank) {
  return {&handles[blockIdx.x / ctas_per_rank],
          (blockIdx.x % ctas_per_rank) * MOE_WARPS_PER_CTA + threadIdx.x / 32,
          ctas_per_rank * MOE_WARPS_PER_CTA};
}
__device__ moe::PhaseStamps* stamps(const moe::MoeRankHandle& h, moe::Phase phase) {
  return moe::region<moe::PhaseStamps>(h, h.layout.stamps) + phase;
}

// One warp per rank: the per-call counters and both phases' stamps to zero.
__global__ void moe_reset_kernel(const moe::MoeRankHandle* handles) {
  const moe::MoeRankHandle& h = handles[blockIdx.x];
  moe::reset_dispatch(moe::Warp{}, h);
  auto* words = reinterpret_cast<uint64_t*>(stamps(h, moe::dispatch_phase));
  if (threadIdx.x < moe::STAMP_BYTES / 8) words[threadIdx.x] = 0;
}

template <typename Transport>
__global__ void __launch_bounds__(MOE_WARPS_PER_CTA * 32)
    moe_dispatch_kernel(const moe::MoeRankHandle* handles, uint32_t ctas_per_rank, uint32_t* failure) {
  const WarpPlace p = place(handles, ctas_per_rank);
  note_failure(failure, moe::dispatch<Transport>(moe::Warp{}, *p.h, p.warp, p.warps,
                                                 stamps(*p.h, moe::dispatch_phase)));
}

__global__ void __launch_bounds__(MOE_WARPS_PER_CTA * 32)
    moe_experts_kernel(const moe::MoeRankHandle* handles, uint32_t ctas_per_rank) {
  const WarpPlace p = place(handles, ctas_per_rank);
  moe::run_experts(moe::Warp{}, *p.h, p.warp, p.warps);
}

template <typename Transport>
__global__ void __launch_bounds__(MOE_WARPS_PER_CTA * 32)
    moe_combine_kernel(const moe::MoeRankHandle* handles, uint32_t ctas_per_rank, uint64_t epoch,
                       uint32_t* failure) {
  const WarpPlace p = place(handles, ctas_per_rank);
  note_failure(failure, moe::combine<Transport>(moe::Warp{}, *p.h, p.warp, p.warps, epoch,
                                                stamps(*p.h, moe::combine_phase)));
}

// Overwrites `bytes` so that the next phase finds nothing of its data in L2.
__global__ void l2_flush_kernel(uint4* buffer, size_t count, uint32_t value) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count; i += size_t{gridDim.x} * blockDim.x) {
    buffer[i] = make_uint4(value, value, value, value);
  }
}

// The effective SM clock: clock64 cycles over globaltimer ns while one thread spins `spin_ns`.
__global__ void sm_clock_kernel(uint64_t spin_ns, double* mhz) {
  const uint64_t t0 = now_ns();
  const long long c0 = clock64();
  uint64_t t1 = t0;
  while (t1 - t0 < spin_ns) t1 = now_ns();
  const long long c1 = clock64();
  *mhz = t1 > t0 ? double(c1 - c0) * 1e3 / double(t1 - t0) : 0;
}

}  // namespace

const char* to_string(MoeTransportKind kind) {
  return kind == MoeTransportKind::mini_gda ? "mini-gda" : "mini-proxy";
}

uint32_t GpuMoeRig::qps_per_rank() const {
  const uint32_t per_pair = options_.transport == MoeTransportKind::mini_gda ? moe::local_experts(options_.shape) : 1;
  return options_.shape.ranks * per_pair;
}
uint32_t GpuMoeRig::qps() const { return options_.shape.ranks * qps_per_rank(); }

GpuMoeRig::GpuMoeRig(const GpuMoeOptions& o) : options_(o), layout_(moe::arena_layout(o.shape)) {
  const std::string error = o.group ? moe::world_error(o.shape, o.group->world_size()) : moe::shape_error(o.shape);
  if (!error.empty()) throw std::invalid_argument(error);
  if (o.warps_per_rank == 0 || o.warps_per_rank % MOE_WARPS_PER_CTA != 0) {
    throw std::invalid_argument("moe: warps per rank " + std::to_string(o.warps_per_rank) +
                                " is not a positive multiple of 8");
  }
  if (o.provider != "softnic" && o.provider != "mlx5") {
    throw std::invalid_argument("moe: provider '" + o.provider + "': softnic or mlx5");
  }
  if (o.provider == "mlx5" && (o.group == nullptr || o.transport != MoeTransportKind::mini_gda)) {
    throw std::invalid_argument(std::string("moe: the mlx5 provider runs one rank per process on mini-gda; this "
                                            "rig was asked for ") + (o.group ? "one rank per process" : "every rank in one process") +
                                " on " + to_string(o.transport));
  }
  ctas_per_rank_ = o.warps_per_rank / MOE_WARPS_PER_CTA;
  first_rank_ = o.group ? static_cast<uint32_t>(o.group->rank()) : 0;
  local_ranks_ = o.group ? 1 : o.shape.ranks;
  if (o.transport == MoeTransportKind::mini_proxy && layout_.bytes > (uint64_t{1} << 32)) {
    throw std::invalid_argument("moe: a rank's arena of " + std::to_string(layout_.bytes) +
                                " bytes does not fit the proxy descriptor's 32-bit local offset");
  }
  open_nic();
  check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "moe: stream");
  for (cudaEvent_t& e : events_) check_cuda(cudaEventCreate(&e), "moe: events");
  nic::QpAttributes a;
  a.sq_wqebbs = moe::required_sq_wqebbs(o.shape);
  a.max_inline = 16;
  // mini-proxy: the CPU workers write the WQEs and doorbells, so their queues live in host memory
  // (mapped: the GPU engine reads them over PCIe, as a NIC would).
  a.placement = o.transport == MoeTransportKind::mini_gda ? nic::Placement::gpu : nic::Placement::host;
  if (o.transport == MoeTransportKind::mini_proxy) a.sq_wqebbs = 1024;
  // Every rank's inputs (the reference checks a rank's received tokens against its sources');
  // only this process's ranks upload theirs.
  for (uint32_t r = 0; r < o.shape.ranks; ++r) inputs_.push_back(moe::make_inputs(o.shape, o.routing, r));
  peers_.resize(o.shape.ranks);
  for (uint32_t i = 0; i < local_ranks_; ++i) open_rank(first_rank_ + i, a);
  if (o.group) {
    if (on_mlx5()) {
      exchange_and_connect_mlx5();
    } else {
      exchange_and_connect();
    }
  } else {
    char pci[32] = {};
    check_cuda(cudaDeviceGetPCIBusId(pci, sizeof pci - 1, o.device), "moe: GPU PCI address");
    gpus_.assign(o.shape.ranks, pci);
    connect();
  }
  if (o.transport == MoeTransportKind::mini_proxy) open_proxies();
  upload_handles();
  preload_and_start();
}

// One process: one NIC for every rank. One rank per process: this rank's NIC with an IPC arena
// large enough for the rank's arena, its queues and the tables (softnic/ipc.h).
void GpuMoeRig::open_nic() {
  if (options_.provider == "mlx5") return open_mlx5();
  softnic::SoftNicOptions n = softnic::gpu_engine_options();
  n.device = options_.device;
  n.engine_ctas = options_.engine_ctas;
  n.engine_warps_per_cta = options_.engine_warps_per_cta;
  n.profile = softnic::timing_profile(options_.nic_profile);
  n.max_qps = qps_per_rank() * local_ranks_;
  n.max_mrs = local_ranks_ + 4;
  n.start_engine = false;
  if (options_.group) n.ipc_arena_bytes = ipc_arena_bytes();
  check_cuda(cudaSetDevice(options_.device), "moe: cudaSetDevice");  // before the NIC's context
  nic_ = std::make_unique<softnic::SoftNic>(n);
}

GpuMoeRig::~GpuMoeRig() {
  if (!shut_down_) {
    for (auto& p : proxies_) p->stop(proxy::StopMode::abandon);
    if (nic_) nic_->stop();
  }
  proxies_.clear();
  for (auto& r : ranks_) r->qps.clear();
  for (auto& r : ranks_) r->pd.reset();
  // The softnic frees what it allocated with itself; the mlx5 provider's GPU blocks are the
  // caller's to release (after the PD deregistered the arena).
  if (mlx5_) {
    for (auto& r : ranks_) if (r->arena) mlx5_->release(r->arena);
  }
  for (void* p : device_memory_) cudaFree(p);
  for (cudaEvent_t e : events_) if (e) cudaEventDestroy(e);
  if (stream_) cudaStreamDestroy(stream_);
}

void GpuMoeRig::open_rank(uint32_t r, const nic::QpAttributes& attributes) {
  auto rank = std::make_unique<Rank>();
  rank->pd = nic().create_pd();
  rank->arena = static_cast<uint8_t*>(nic().allocate(layout_.bytes, nic::Placement::gpu));
  check_cuda(cudaMemset(rank->arena, 0, layout_.bytes), "moe: arena");
  rank->mr = rank->pd->register_memory(rank->arena, layout_.bytes, nic::ACCESS_ALL);
  for (uint32_t q = 0; q < qps_per_rank(); ++q) rank->qps.push_back(rank->pd->create_qp(attributes));
  const moe::RankInputs& in = inputs_.at(r);
  check_cuda(cudaMemcpy(rank->arena + layout_.x, in.x.data(), in.x.size() * 2, cudaMemcpyHostToDevice), "moe: x");
  check_cuda(cudaMemcpy(rank->arena + layout_.topk_idx, in.topk_idx.data(), in.topk_idx.size() * 4,
                        cudaMemcpyHostToDevice), "moe: topk_idx");
  check_cuda(cudaMemcpy(rank->arena + layout_.topk_weights, in.topk_weights.data(),
                        in.topk_weights.size() * 4, cudaMemcpyHostToDevice), "moe: topk_weights");
  peers_.at(r) = {reinterpret_cast<uint64_t>(rank->arena), rank->mr.rkey};
  ranks_.push_back(std::move(rank));
}

// One process: QP (r -> d, l) to QP (d -> r, l); a rank's own QPs to themselves.
void GpuMoeRig::connect() {
  const uint32_t ranks = options_.shape.ranks, local = qps_per_rank() / ranks;
  for (uint32_t r = 0; r < ranks; ++r) {
    for (uint32_t d = 0; d < ranks; ++d) {
      for (uint32_t l = 0; l < local; ++l) {
        ranks_[r]->qps[d * local + l]->connect(ranks_[d]->qps[r * local + l]->endpoint());
      }
    }
  }
}

// Rank r's proxy (moe/transport_proxy.h): worker d on QP (r -> d), window d = r's arena -> d's
// arena, ring l x ranks + d (served by worker d) for channel (d, l); rings in mapped host memory,
// the producers' counters in GPU memory (proxy_cuda_rig.h).
void GpuMoeRig::open_proxies() {
  const uint32_t ranks = options_.shape.ranks, local = moe::local_experts(options_.shape);
  for (uint32_t i = 0; i < local_ranks_; ++i) {
    const uint32_t r = first_rank_ + i;
    proxy::ProxyConfig c;
    c.workers = ranks;
    c.rings = ranks * local;
    c.ring_entries = 512;
    c.batch = options_.doorbell_batch;
    c.pin = false;
    c.timeout_ns = options_.timeout_ns;
    c.memory.shared = proxy::cuda::mapped_host_allocator();
    c.memory.producer = proxy::cuda::device_allocator();
    std::vector<nic::QpHandle> worker_qps;
    std::vector<proxy::Window> windows;
    for (uint32_t d = 0; d < ranks; ++d) {
      worker_qps.push_back(ranks_[i]->qps[d]->handle());
      windows.push_back({peers_[r].base, ranks_[i]->mr.lkey, peers_[d].base, peers_[d].rkey});
    }
    proxies_.push_back(std::make_unique<proxy::Proxy>(c, worker_qps, windows));
  }
}

void GpuMoeRig::upload_handles() {
  auto device = [&](size_t bytes) {
    void* p = nullptr;
    check_cuda(cudaMalloc(&p, std::max<size_t>(bytes, 16)), "moe: device tables");
    check_cuda(cudaMemset(p, 0, std::max<size_t>(bytes, 16)), "moe: device tables");
    device_memory_.push_back(p);
    return p;
  };
  const uint32_t ranks = options_.shape.ranks;
  device_peers_ = static_cast<moe::PeerWindow*>(device(sizeof(moe::PeerWindow) * ranks));
  check_cuda(cudaMemcpy(device_peers_, peers_.data(), sizeof(moe::PeerWindow) * ranks, cudaMemcpyHostToDevice), "moe: peers");
  std::vector<moe::MoeRankHandle> handles;
  for (uint32_t i = 0; i < local_ranks_; ++i) {
    const uint32_t r = first_rank_ + i;
    Rank& rank = *ranks_[i];
    std::vector<nic::QpHandle> qps;
    for (auto& qp : rank.qps) qps.push_back(qp->handle());
    rank.device_qps = static_cast<nic::QpHandle*>(device(sizeof(nic::QpHandle) * qps.size()));
    check_cuda(cudaMemcpy(rank.device_qps, qps.data(), sizeof(nic::QpHandle) * qps.size(), cudaMemcpyHostToDevice), "moe: QPs");
    if (!proxies_.empty()) {
      const uint32_t local = moe::local_experts(options_.shape);
      std::vector<proxy::RingHandle> rings;
      for (uint32_t d = 0; d < ranks; ++d) {
        for (uint32_t l = 0; l < local; ++l) rings.push_back(proxies_[i]->ring(l * ranks + d));
      }
      rank.device_rings = static_cast<proxy::RingHandle*>(device(sizeof(proxy::RingHandle) * rings.size()));
      check_cuda(cudaMemcpy(rank.device_rings, rings.data(), sizeof(proxy::RingHandle) * rings.size(),
                            cudaMemcpyHostToDevice), "moe: rings");
    }
    handles.push_back(moe::MoeRankHandle{options_.shape, layout_, r, rank.arena, rank.mr.lkey, device_peers_,
                                         rank.device_qps, rank.device_rings, options_.doorbell_batch,
                                         options_.timeout_ns});
  }
  handles_ = static_cast<moe::MoeRankHandle*>(device(sizeof(moe::MoeRankHandle) * local_ranks_));
  check_cuda(cudaMemcpy(handles_, handles.data(), sizeof(moe::MoeRankHandle) * local_ranks_, cudaMemcpyHostToDevice), "moe: handles");
  failure_ = static_cast<uint32_t*>(device(4));
  flush_ = static_cast<uint8_t*>(device(options_.l2_flush_bytes));
}

// Loads every kernel, checks that a phase's CTAs fit beside the engine's (every warp must be
// resident: counts and flags wait on other warps), then starts the engine.
void GpuMoeRig::preload_and_start() {
  softnic::reserve_local_memory(8192);
  const bool gda = options_.transport == MoeTransportKind::mini_gda;
  dispatch_kernel_ = on_mlx5() ? reinterpret_cast<const void*>(moe_dispatch_kernel<GdaSystemTransport>)
                     : gda     ? reinterpret_cast<const void*>(moe_dispatch_kernel<GdaTransport>)
                               : reinterpret_cast<const void*>(moe_dispatch_kernel<ProxyTransport>);
  combine_kernel_ = on_mlx5() ? reinterpret_cast<const void*>(moe_combine_kernel<GdaSystemTransport>)
                    : gda     ? reinterpret_cast<const void*>(moe_combine_kernel<GdaTransport>)
                              : reinterpret_cast<const void*>(moe_combine_kernel<ProxyTransport>);
  const void* kernels[] = {reinterpret_cast<const void*>(moe_reset_kernel), dispatch_kernel_,
                           reinterpret_cast<const void*>(moe_experts_kernel), combine_kernel_,
                           reinterpret_cast<const void*>(l2_flush_kernel),
                           reinterpret_cast<const void*>(sm_clock_kernel)};
  for (const void* k : kernels) softnic::preload_kernel(k, "moe");
  int sms = 0, per_sm_dispatch = 0, per_sm_combine = 0;
  check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, options_.device), "moe: SMs");
  check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_dispatch, dispatch_kernel_, MOE_WARPS_PER_CTA * 32, 0), "moe: occupancy");
  check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_combine, combine_kernel_, MOE_WARPS_PER_CTA * 32, 0), "moe: occupancy");
  const int engine_ctas = nic_ ? static_cast<int>(options_.engine_ctas) : 0;  // a ConnectX runs no engine kernel
  const int resident = std::min(per_sm_dispatch, per_sm_combine) * (sms - engine_ctas);
  const uint32_t wanted = ctas_per_rank_ * local_ranks_;
  if (resident < static_cast<int>(wanted)) {
    throw std::invalid_argument("moe: " + std::to_string(wanted) + " CTAs (" + std::to_string(options_.warps_per_rank) +
                                " warps per rank x " + std::to_string(local_ranks_) +
                                " ranks in this process) cannot all be resident beside " + std::to_string(engine_ctas) +
                                " engine CTAs: at most " + std::to_string(resident) + "; lower --warps-per-rank");
  }
  // One rank per process: every peer's import is open before any engine of the launch starts
  // (softnic/ipc.h, step 3).
  if (options_.group) options_.group->barrier();
  if (nic_) nic_->start();
  for (auto& p : proxies_) p->start();
}

nic::Nic& GpuMoeRig::nic() const {
  if (nic_) return *nic_;
  return *mlx5_;
}

void GpuMoeRig::wait_stream(const char* what) const {
  if (nic_) return wait_for_stream(stream_, *nic_, what, 60);
  const std::string device = options_.mlx5.nic;
  wait_for_stream(stream_, what, 60, [device] {
    return "provider mlx5 (" + device + "): no engine to describe; a NIC error shows as a warp's error CQE status";
  });
}

void GpuMoeRig::check_failure(const char* phase) const {
  uint32_t failed = 0;
  check_cuda(cudaMemcpyAsync(&failed, failure_, 4, cudaMemcpyDeviceToHost, stream_), "moe: status");
  wait_stream(phase);
  if (failed != 0) {
    throw std::runtime_error(std::string("moe ") + phase + ": a warp returned " +
                             to_string(static_cast<gda::Status>(failed)) + " (the line above names the rank and expert)");
  }
}

MoeSample GpuMoeRig::run_once() {
  const uint32_t ranks = local_ranks_, grid = ctas_per_rank_ * ranks, block = MOE_WARPS_PER_CTA * 32;
  const size_t flush_words = options_.l2_flush_bytes / 16;
  ++epoch_;
  // One rank per process: the barrier before each sample (in one process the launch is one).
  if (options_.group) options_.group->barrier();
  moe_reset_kernel<<<ranks, 32, 0, stream_>>>(handles_);
  l2_flush_kernel<<<264, 512, 0, stream_>>>(reinterpret_cast<uint4*>(flush_), flush_words, static_cast<uint32_t>(epoch_));
  cudaEventRecord(events_[0], stream_);
  void* dispatch_args[] = {&handles_, &ctas_per_rank_, &failure_};
  check_cuda(cudaLaunchKernel(dispatch_kernel_, grid, block, dispatch_args, 0, stream_), "moe: dispatch launch");
  cudaEventRecord(events_[1], stream_);
  moe_experts_kernel<<<grid, block, 0, stream_>>>(handles_, ctas_per_rank_);
  l2_flush_kernel<<<264, 512, 0, stream_>>>(reinterpret_cast<uint4*>(flush_), flush_words, static_cast<uint32_t>(epoch_) + 1);
  cudaEventRecord(events_[2], stream_);
  void* combine_args[] = {&handles_, &ctas_per_rank_, &epoch_, &failure_};
  check_cuda(cudaLaunchKernel(combine_kernel_, grid, block, combine_args, 0, stream_), "moe: combine launch");
  cudaEventRecord(events_[3], stream_);
  check_cuda(cudaGetLastError(), "moe: launch");
  check_failure("dispatch and combine");
  MoeSample s;
  float ms = 0;
  check_cuda(cudaEventElapsedTime(&ms, events_[0], events_[1]), "moe: dispatch events");
  s.dispatch_us = ms * 1e3;
  check_cuda(cudaEventElapsedTime(&ms, events_[2], events_[3]), "moe: combine events");
  s.combine_us = ms * 1e3;
  for (const auto& rank : ranks_) {
    auto both = read<moe::PhaseStamps>(rank->arena + layout_.stamps, moe::phases);
    s.dispatch.push_back(both[moe::dispatch_phase]);
    s.combine.push_back(both[moe::combine_phase]);
  }
  return s;
}

double GpuMoeRig::measure_sm_clock_mhz() {
  auto* mhz = reinterpret_cast<double*>(flush_);  // the flush buffer: rewritten before each phase
  sm_clock_kernel<<<1, 1, 0, stream_>>>(2'000'000, mhz);
  check_cuda(cudaGetLastError(), "moe: SM clock launch");
  return read<double>(flush_, 1).at(0);
}

template <typename T>
std::vector<T> GpuMoeRig::read(const uint8_t* device, size_t count) const {
  std::vector<T> out(count);
  check_cuda(cudaMemcpyAsync(out.data(), device, sizeof(T) * count, cudaMemcpyDeviceToHost, stream_), "moe: read-back");
  wait_stream("moe: read-back");
  return out;
}

void GpuMoeRig::validate(moe::CheckReport& dispatch, moe::CheckReport& combine) const {
  const moe::MoeShape& s = options_.shape;
  const size_t rows = size_t{moe::local_experts(s)} * moe::expert_capacity(s);
  for (uint32_t i = 0; i < local_ranks_; ++i) {
    const uint32_t r = first_rank_ + i;
    const uint8_t* a = ranks_[i]->arena;
    const auto x = read<uint8_t>(a + layout_.packed_x, rows * s.hidden);
    const auto scales = read<float>(a + layout_.packed_scales, rows * moe::scales_per_token(s));
    const auto src = read<int32_t>(a + layout_.packed_src_info, rows);
    const auto range = read<uint64_t>(a + layout_.packed_layout_range, size_t{moe::local_experts(s)} * s.ranks);
    const auto count = read<uint32_t>(a + layout_.packed_count, moe::local_experts(s));
    moe::check_dispatch(s, inputs_, r, {x.data(), scales.data(), src.data(), range.data(), count.data()}, dispatch);
    const auto combined = read<uint16_t>(a + layout_.combined_x, size_t{s.tokens} * s.hidden);
    moe::check_combine(s, inputs_, r, combined.data(), combine);
  }
}

}  // namespace dissect::bench::gpu
