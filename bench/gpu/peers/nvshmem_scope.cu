// gpu-completion-scope --path nvshmem-ibgda: NVSHMEM's completion scopes on the softnic. One GPU
// thread puts 8 B on QP 0 of Q loopback QPs with NVSHMEM's own WQE writer and submit, then waits
// with NVSHMEM's per-QP quiet (ibgda_quiet) or with its PE-wide one (nvshmemi_ibgda_quiet, what
// nvshmem_quiet runs on IBGDA), which polls every RC QP of the PE whether or not it has work: the
// growth Figure 4 shows. The QPs' send CQs are collapsed, as NVSHMEM creates them.
#include "dissect/peers/nvshmem_ibgda.cuh"

#include <vector>

#include "dissect/common/error.h"
#include "../harness.cuh"
#include "../peer_scope.h"

namespace dissect::bench {
namespace {

namespace ibgda = peers::nvshmem_ibgda;
constexpr uint32_t SLOTS = 64;  // as completion_scope.cu: put i to word 1 + i % SLOTS

// One run of nvshmem_scope_kernel: `n` nvshmem_p puts on QP 0 of the table (`qp0`, its target
// first in `targets`), each waited for by the per-QP quiet or, `all`, the all-QP one.
struct NvshmemScopeArgs {
  nvshmemi_ibgda_device_qp_t* qp0;
  const gpu::LoopbackTarget* targets;
  bool all;
  uint32_t n;
  unsigned long long* samples;
  uint32_t* failure;
};

__global__ void nvshmem_scope_kernel(NvshmemScopeArgs args) {
  nvshmemi_ibgda_device_qp_t* const qp0 = args.qp0;
  const gpu::LoopbackTarget* const targets = args.targets;
  const bool all = args.all;
  const uint32_t n = args.n;
  unsigned long long* const samples = args.samples;
  uint32_t* const failure = args.failure;
  const gpu::LoopbackTarget t = targets[0];
  for (uint32_t i = 0; i < n; ++i) {
    const uint64_t t0 = now_ns();
    const uint64_t raddr = reinterpret_cast<uint64_t>(t.dst + 8 + 8 * (i % SLOTS));
    ibgda::p<uint64_t>(qp0, uint64_t{i} + 1, raddr, ibgda::mkey(t.rkey));
    const int verdict = all ? ibgda::quiet_all(qp0) : ibgda::quiet(qp0);
    samples[i] = now_ns() - t0;
    if (verdict != 0) {
      *failure = 1u | (static_cast<uint32_t>(verdict) & 0xffff) << 8;
      return;
    }
  }
}

bool landed(const gpu::LoopbackQps& q, uint32_t n) {
  std::vector<uint64_t> slots(SLOTS + 1);
  q.read(slots.data(), reinterpret_cast<const uint64_t*>(q.host_targets()[0].dst), SLOTS + 1);
  for (uint32_t i = n > SLOTS ? n - SLOTS : 0; i < n; ++i) {
    if (slots[1 + i % SLOTS] != uint64_t{i} + 1) return false;
  }
  return true;
}

}  // namespace

std::string scope_path_library(const std::string& path, std::string* version) {
  if (path == "mini-gda") return "";
  if (path != "nvshmem-ibgda") {
    throw InvalidArgument("--path " + path +
                          ": gpu-completion-scope runs mini-gda or nvshmem-ibgda");
  }
  *version = ibgda::version();
  return ibgda::LIBRARY;
}

void measure_nvshmem_scope(const gpu::LoopbackOptions& nic, uint32_t qps, uint32_t warmup,
                           uint32_t iterations, Metric& per_qp, Metric& all_qps, bool& valid) {
  gpu::LoopbackOptions o = nic;
  o.qps = qps;
  o.send_cq_collapsed = true;
  gpu::LoopbackQps q(o);
  const uint32_t n = warmup + iterations;
  auto* samples = static_cast<unsigned long long*>(q.scratch(8 * size_t{n}));
  auto* failure = static_cast<uint32_t*>(q.scratch(4));
  void* table = q.scratch(ibgda::rc_table_bytes(qps));
  std::vector<nic::QpHandle> handles;
  for (const gpu::LoopbackTarget& t : q.host_targets()) handles.push_back(t.qp);
  ibgda::upload_rc_table(handles.data(), qps, table, q.stream());
  // This unit's NVSHMEM state: QP i of the table is "RC i to PE 1", num_rc_per_pe = qps.
  ibgda::upload_state(q.stream(), ibgda::rc_table_qps(table), qps);
  nvshmemi_ibgda_device_qp_t* qp0 = ibgda::rc_table_qp(table, qps, 0);
  q.start({reinterpret_cast<const void*>(&nvshmem_scope_kernel)}, "nvshmem scope kernel");
  for (const bool all : {false, true}) {
    nvshmem_scope_kernel<<<1, 1, 0, q.stream()>>>(NvshmemScopeArgs{qp0, q.targets(), all, n, samples, failure});
    check_cuda(cudaGetLastError(), "launch nvshmem_scope_kernel");
    q.wait("gpu-completion-scope nvshmem-ibgda kernel");
    uint32_t failed = 0;
    q.read(&failed, failure, 1);
    if (failed != 0) {
      valid = false;
      return;
    }
    std::vector<unsigned long long> ns(n);
    q.read(ns.data(), samples, n);
    valid = valid && landed(q, n);
    std::vector<double> us;
    for (uint32_t i = warmup; i < n; ++i) us.push_back(double(ns[i]) / 1e3);
    (all ? all_qps : per_qp).runs.push_back(summarize(us));
  }
}

}  // namespace dissect::bench
