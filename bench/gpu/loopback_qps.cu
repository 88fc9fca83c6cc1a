#include "loopback_qps.h"

#include <algorithm>

#include "dissect/common/cuda.h"
#include "dissect/common/error.h"
#include "harness.cuh"

namespace dissect::bench::gpu {

LoopbackQps::LoopbackQps(const LoopbackOptions& o) : device_(o.device), sq_wqebbs_(o.sq_wqebbs) {
  softnic::SoftNicOptions n = softnic::gpu_engine_options();
  n.device = o.device;
  n.engine_ctas = o.engine_ctas;
  n.engine_warps_per_cta = o.engine_warps_per_cta;
  n.profile = softnic::timing_profile(o.nic_profile);
  n.doorbell_dates = o.doorbell_dates;
  n.max_qps = std::max<uint32_t>(o.qps, 1);
  n.max_mrs = 2 * o.qps + 4;
  n.start_engine = false;
  n.local_memory_reserve = LOCAL_MEMORY_RESERVE;
  nic_ = std::make_unique<softnic::SoftNic>(n);
  nic::QpAttributes a;
  a.sq_wqebbs = o.sq_wqebbs;
  a.cq_entries = o.sq_wqebbs;
  a.send_cq_collapsed = o.send_cq_collapsed;
  a.max_inline = o.max_inline;
  a.placement = nic::Placement::gpu;
  a.doorbell = o.doorbell;
  if (o.shared_cq_qps > o.qps) {
    throw InvalidArgument("loopback QPs: " + std::to_string(o.shared_cq_qps) +
                          " QPs to share a CQ, of " + std::to_string(o.qps));
  }
  if (o.shared_cq_qps != 0) {
    nic::CqAttributes c;
    c.cqe_entries = 1;
    while (c.cqe_entries < uint64_t{o.sq_wqebbs} * o.shared_cq_qps) c.cqe_entries <<= 1;
    c.max_members = o.shared_cq_qps;
    c.placement = nic::Placement::gpu;
    shared_cq_ = nic_->create_cq(c);
  }
  pes_.resize(o.qps);
  std::vector<nic::QpHandle> handles;
  for (GpuPe& pe : pes_) {
    const bool shares = static_cast<uint32_t>(&pe - pes_.data()) < o.shared_cq_qps;
    a.send_cq = shares ? shared_cq_.get() : nullptr;
    a.cq_entries = shares ? 0 : o.sq_wqebbs;
    open_pe(pe, nic_.get(), a, o.buffer_bytes);
    pe.qp->connect(pe.qp->endpoint());
    host_targets_.push_back(
        LoopbackTarget{pe.qp->handle(), pe.src, pe.dst, pe.src_mr.lkey, pe.dst_mr.rkey});
    handles.push_back(pe.qp->handle());
  }
  cudaSetDevice(o.device);
  check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "loopback QPs: stream");
  targets_ = static_cast<LoopbackTarget*>(scratch(sizeof(LoopbackTarget) * o.qps));
  handles_ = static_cast<nic::QpHandle*>(scratch(sizeof(nic::QpHandle) * o.qps));
  write_bytes(targets_, host_targets_.data(), sizeof(LoopbackTarget) * o.qps);
  write_bytes(handles_, handles.data(), sizeof(nic::QpHandle) * o.qps);
}

LoopbackQps::~LoopbackQps() {
  if (nic_) nic_->stop();
  pes_.clear();
  shared_cq_.reset();
  for (void* p : scratch_) cudaFree(p);
  if (stream_) cudaStreamDestroy(stream_);
}

void LoopbackQps::start(const std::vector<const void*>& kernels, const char* what) {
  cudaSetDevice(device_);
  softnic::reserve_local_memory(LOCAL_MEMORY_RESERVE);
  for (const void* k : kernels) softnic::preload_kernel(k, what);
  nic_->start();
}

std::vector<const telemetry::QpCounters*> LoopbackQps::attach_telemetry(uint64_t n) {
  std::vector<const telemetry::QpCounters*> blocks;
  std::vector<nic::QpHandle> handles;
  const size_t bytes = sizeof(telemetry::QpCounters) + size_t{sq_wqebbs_} * sizeof(uint64_t);
  for (LoopbackTarget& t : host_targets_) {
    auto* block = static_cast<telemetry::QpCounters*>(scratch(bytes));
    telemetry::QpCounters fresh;
    telemetry::initialise_counters(fresh, t.qp.qpn, telemetry::HistogramShape{5, 30000, n});
    write_bytes(block, &fresh, sizeof fresh);
    nic::attach_telemetry(t.qp, block, reinterpret_cast<uint64_t*>(block + 1), fresh.sample_mask);
    blocks.push_back(block);
    handles.push_back(t.qp);
  }
  write_bytes(targets_, host_targets_.data(), sizeof(LoopbackTarget) * host_targets_.size());
  write_bytes(handles_, handles.data(), sizeof(nic::QpHandle) * handles.size());
  return blocks;
}

uint64_t LoopbackQps::deepest_backlog() {
  uint64_t deepest = 0;
  for (const LoopbackTarget& t : host_targets_) {
    deepest = std::max(deepest, nic_->counters(t.qp.qpn).deepest_backlog);
  }
  return deepest;
}

void* LoopbackQps::scratch(size_t bytes) {
  void* p = nullptr;
  check_cuda(cudaMalloc(&p, std::max<size_t>(bytes, 8)), "loopback QPs: scratch memory");
  check_cuda(cudaMemset(p, 0, std::max<size_t>(bytes, 8)), "loopback QPs: scratch memory");
  scratch_.push_back(p);
  return p;
}

void LoopbackQps::write_bytes(void* device, const void* host, size_t bytes) const {
  check_cuda(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream_),
             "loopback QPs: upload");
  synchronize("loopback QPs: upload");
}

void LoopbackQps::read_bytes(void* host, const void* device, size_t bytes) const {
  check_cuda(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream_),
             "loopback QPs: read-back");
  synchronize("loopback QPs: read-back");
}

void LoopbackQps::synchronize(const char* what) const {
  check_cuda(cudaStreamSynchronize(stream_), what);
}

void LoopbackQps::wait(const char* what, double seconds) const {
  wait_for_stream(stream_, *nic_, what, seconds);
}

}  // namespace dissect::bench::gpu
