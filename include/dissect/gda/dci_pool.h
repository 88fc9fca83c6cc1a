// A DCI pool and its mapping policy: N DCIs (nic::ProtectionDomain::create_dci) that the threads
// of a kernel submit on, and the rule that gives each thread its DCI. The paper's §3.4: "a pool of
// dynamically connected initiators (DCIs) address many remote DC targets (DCTs)" — NVSHMEM's DCI
// pool; one DCI reaches every DCT, each WQE naming its own (gda::put_dc, dc_wqe.h), so the policy
// decides only who shares a send queue, never who can reach whom.
//
//   policy     thread t of CTA c on SM s submits on DCI     threads per DCI
//   per_warp   (global warp index of t) % count             a warp, or several warps
//   per_cta    (linear CTA index c) % count                 a CTA, or several
//   per_sm     (%smid of s) % count                         every CTA resident on s
//
// Who calls: the host builds the pool (dci_pool(): handles in memory the submitters reach, the
// count checked); device threads (and host threads in the CPU tier, which name their place) call
// pool_dci(). Several threads share a DCI under every policy unless the caller makes them not
// (one submitting lane per warp and count >= warps, per_warp): submit with Sharing::shared
// (gda/sharing.h) where they do. %smid is the SM a thread runs on now: a CTA stays on its SM, so a
// thread's DCI is fixed for its life, but SM numbers need not be dense, so per_sm may leave DCIs
// unused when count is not a multiple of the SMs.
#pragma once

#include <cstdint>
#include <type_traits>

#include <string>

#include "dissect/common/device.h"
#include "dissect/common/error.h"
#include "dissect/nic/handles.h"

namespace dissect::gda {

enum class DciPolicy : uint32_t { per_warp, per_cta, per_sm };

// The most DCIs a pool holds (NVSHMEM's pool sizes are tens; a bound keeps a typo from sizing it).
inline constexpr uint32_t MAX_POOL_DCIS = 1024;

// Device-visible and trivially copyable: passed by value to kernels.
struct DciPool {
  const nic::QpHandle* dcis;  // `count` DCI handles, in memory the submitters read
  uint32_t count;             // 1..MAX_POOL_DCIS
  DciPolicy policy;
};
static_assert(std::is_trivially_copyable_v<DciPool>);

// Where a submitting thread runs, the inputs of every policy.
struct SubmitterPlace {
  uint32_t warp;  // global warp index: (linear CTA index x threads per CTA + linear thread) / 32
  uint32_t cta;   // linear CTA index in the grid
  uint32_t sm;    // %smid
};

// The DCI index `policy` gives a thread at `at` in a pool of `count` (>= 1).
DISSECT_HD constexpr uint32_t dci_index(DciPolicy policy, const SubmitterPlace& at, uint32_t count) {
  const uint32_t key = policy == DciPolicy::per_warp ? at.warp : policy == DciPolicy::per_cta ? at.cta : at.sm;
  return key % count;
}

DISSECT_HD inline const nic::QpHandle& pool_dci(const DciPool& pool, const SubmitterPlace& at) {
  return pool.dcis[dci_index(pool.policy, at, pool.count)];
}

#if defined(__CUDACC__)
// The calling thread's place.
__device__ inline SubmitterPlace this_submitter() {
  uint32_t sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  const uint32_t cta = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const uint32_t thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const uint32_t per_cta = blockDim.x * blockDim.y * blockDim.z;
  return SubmitterPlace{static_cast<uint32_t>((uint64_t{cta} * per_cta + thread) / 32), cta, sm};
}

// The calling thread's DCI.
__device__ inline const nic::QpHandle& my_dci(const DciPool& pool) { return pool_dci(pool, this_submitter()); }
#endif

// Host only (names and the checked pool).
inline const char* to_string(DciPolicy policy) {
  return policy == DciPolicy::per_warp ? "per-warp" : policy == DciPolicy::per_cta ? "per-cta" : "per-sm";
}

// "per-warp", "per-cta" or "per-sm"; throws naming anything else.
inline DciPolicy dci_policy_from_string(const std::string& name) {
  for (DciPolicy p : {DciPolicy::per_warp, DciPolicy::per_cta, DciPolicy::per_sm}) {
    if (name == to_string(p)) return p;
  }
  throw InvalidArgument("DCI policy '" + name + "' (per-warp, per-cta, per-sm)");
}

// A pool of the `count` handles at `dcis` (host memory for host submitters, memory the kernel
// reads for device ones; the caller keeps it and the DCIs alive while the pool is used).
inline DciPool dci_pool(const nic::QpHandle* dcis, uint32_t count, DciPolicy policy) {
  if (dcis == nullptr || count == 0 || count > MAX_POOL_DCIS) {
    throw InvalidArgument("DCI pool of " + std::to_string(count) + " DCIs at " +
                          (dcis == nullptr ? std::string("null") : std::string("a handle array")) +
                          " (1.." + std::to_string(MAX_POOL_DCIS) + " handles)");
  }
  return DciPool{dcis, count, policy};
}

}  // namespace dissect::gda
