// The ordering configurations of the paper's Table 4, chosen at compile time.
//
// Two requirements make a GPU-built WQE safe (paper §3.2): (1) the WQE and source-payload stores
// are visible to the NIC before the doorbell that announces them; (2) when one thread rings for
// WQEs other threads wrote, each writer's stores are visible before the ringing thread sees its
// slot as ready (gda/submit.h covers (2) with an acquire-release publication counter; the fences
// below are cumulative, so they carry the writers' stores along).
//
// Each policy is a tag type with the three steps of the doorbell path and the load the CQ poller
// uses; the poll load has the scope of the policy's stores. A policy is correct only for an
// observer inside its scope: GPU scope is enough when the NIC model is a kernel on the same GPU,
// and is NOT enough for a NIC or host-thread engine reading host memory over PCIe; that mismatch
// is one of the things the suite measures.
//
// The submit path's other compile-time policy is telemetry's: gda::counted<Ordering> is one of
// these orderings with the telemetry hooks compiled in, a bare ordering compiles none. Both live
// in the nic layer (nic/telemetry_policy.h, beside the counter block they update) and are named
// here for gda, at the end of this file.
#pragma once

#include <cstdint>

#include "dissect/common/atomic.h"
#include "dissect/mlx5/endian.h"
#include "dissect/nic/telemetry_policy.h"

namespace dissect::gda::ordering {

// Stores with no ordering at all (a volatile store on the device, relaxed on the host).
template <typename T>
DISSECT_HD inline void plain_store(T* p, T v) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<volatile T*>(p) = v;
#else
  __atomic_store_n(p, v, __ATOMIC_RELAXED);
#endif
}
template <typename T>
DISSECT_HD inline T plain_load(T* p) {
#if defined(__CUDA_ARCH__)
  return *reinterpret_cast<volatile T*>(p);
#else
  return __atomic_load_n(p, __ATOMIC_RELAXED);
#endif
}

// None (unsafe control): no fence anywhere; the NIC may see the doorbell before the WQE.
struct unordered {
  static constexpr const char* name = "none (unsafe control)";
  static constexpr const char* key = "unordered";
  DISSECT_HD static void store_dbrec(uint32_t* dbrec, uint32_t v) { plain_store(dbrec, v); }
  DISSECT_HD static void store_doorbell(uint64_t* db, uint64_t v) { plain_store(db, v); }
  template <typename T>
  DISSECT_HD static T poll_load(T* p) { return plain_load(p); }
};

// The three shapes of Table 4's fenced rows, each at a scope S: the policies below are one of
// them at GPU or at system scope (and their name). The poll load has the scope of the stores.
//
// fence_then_relaxed<S>: one release fence at S after the WQE stores, then a relaxed dbrec and a
// relaxed system-scope doorbell store (a fence-release then a morally strong store synchronises
// with the observer's acquire); with FENCED_DOORBELL a second fence at S before the doorbell.
template <Scope S, bool FENCED_DOORBELL = false>
struct fence_then_relaxed {
  DISSECT_HD static void store_dbrec(uint32_t* dbrec, uint32_t v) {
    fence_release<S>();
    plain_store(dbrec, v);
  }
  DISSECT_HD static void store_doorbell(uint64_t* db, uint64_t v) {
    if constexpr (FENCED_DOORBELL) fence_release<S>();
    store_relaxed<Scope::system>(db, v);
  }
  template <typename T>
  DISSECT_HD static T poll_load(T* p) { return load_acquire<S>(p); }
};

// release_stores<S>: the dbrec and the doorbell each a release store at S.
template <Scope S>
struct release_stores {
  DISSECT_HD static void store_dbrec(uint32_t* dbrec, uint32_t v) { store_release<S>(dbrec, v); }
  DISSECT_HD static void store_doorbell(uint64_t* db, uint64_t v) { store_release<S>(db, v); }
  template <typename T>
  DISSECT_HD static T poll_load(T* p) { return load_acquire<S>(p); }
};

// sequential_fences<S>: a sequentially consistent fence at S (fence.sc) before the dbrec and
// before the doorbell, each then a plain store.
template <Scope S>
struct sequential_fences {
  DISSECT_HD static void store_dbrec(uint32_t* dbrec, uint32_t v) {
    fence_sequential<S>();
    plain_store(dbrec, v);
  }
  DISSECT_HD static void store_doorbell(uint64_t* db, uint64_t v) {
    fence_sequential<S>();
    plain_store(db, v);
  }
  template <typename T>
  DISSECT_HD static T poll_load(T* p) { return load_acquire<S>(p); }
};

// One GPU-scope release fence after the WQE stores, then relaxed dbrec and doorbell stores
// (DOCA GPUNetIO as bundled with NCCL GDAKI).
struct gpu_fence : fence_then_relaxed<Scope::gpu> {
  static constexpr const char* name = "GPU-scope fence (DOCA, GDAKI)";
  static constexpr const char* key = "gpu-fence";
};

// As gpu_fence, plus a second GPU-scope fence between the doorbell record and the doorbell.
struct gpu_fence_fenced_dbrec : fence_then_relaxed<Scope::gpu, /*FENCED_DOORBELL=*/true> {
  static constexpr const char* name = "+ fenced doorbell record";
  static constexpr const char* key = "gpu-fence-dbrec";
};

// GPU-scope release stores for the dbrec and the doorbell (DeepEP's st.release.gpu).
struct gpu_release_store : release_stores<Scope::gpu> {
  static constexpr const char* name = "GPU-scope release store (DeepEP)";
  static constexpr const char* key = "gpu-release";
};

// __threadfence() (fence.sc.gpu) before the dbrec and before the doorbell (NVSHMEM's default).
struct threadfence : sequential_fences<Scope::gpu> {
  static constexpr const char* name = "__threadfence() (NVSHMEM)";
  static constexpr const char* key = "threadfence";
};

// System-scope release stores (st.release.sys): correct for a NIC or engine outside the GPU.
struct system_release_store : release_stores<Scope::system> {
  static constexpr const char* name = "System-scope release store";
  static constexpr const char* key = "system-release";
};

// __threadfence_system() (fence.sc.sys) before the dbrec and before the doorbell.
struct system_fence : sequential_fences<Scope::system> {
  static constexpr const char* name = "System-scope fence";
  static constexpr const char* key = "system-fence";
};

// gpu_fence at system scope: one system-scope release fence after the WQE stores, then a relaxed
// dbrec and a relaxed system-scope doorbell store. What a doorbell observed outside the GPU needs
// (a host forwarder's acquire of the cpu-assisted mailbox, nic.h: fence-release then a morally
// strong store synchronises with it), at one fence a doorbell where system_fence pays two. Not a
// row of Table 4 (the paper's rows are below).
struct system_release_fence : fence_then_relaxed<Scope::system> {
  static constexpr const char* name = "System-scope release fence";
  static constexpr const char* key = "system-release-fence";
};

// Calls f.template operator()<Policy>() for every policy, in Table 4's row order.
template <typename F>
void for_each_policy(F&& f) {
  f.template operator()<unordered>();
  f.template operator()<gpu_fence>();
  f.template operator()<gpu_fence_fenced_dbrec>();
  f.template operator()<gpu_release_store>();
  f.template operator()<threadfence>();
  f.template operator()<system_release_store>();
  f.template operator()<system_fence>();
}

}  // namespace dissect::gda::ordering

namespace dissect::gda {

// The telemetry policy (nic/telemetry_policy.h) under gda's names: what a submit path's policy
// counts (counted, COUNTS), what a builder hands the post hook (PostNote), and the hooks.
using telemetry::counted;
using telemetry::COUNTS;
using telemetry::note_doorbell;
using telemetry::note_error;
using telemetry::note_poll;
using telemetry::note_post;
using telemetry::note_retired;
using telemetry::PostNote;
using telemetry::TELEMETRY_COMPILED;

}  // namespace dissect::gda
