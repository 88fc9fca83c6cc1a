// Scoped atomics and fences that compile for host and device.
//
// On the device each call is one PTX instruction of the named scope (through libcu++'s
// cuda::atomic_ref, which emits ld.acquire.gpu, st.release.sys, fence.acq_rel.gpu, ...). On the
// host the scope has no meaning (one coherence domain) and each call is the C++ memory-order
// operation of the same strength, so host threads standing in for GPU threads obey the same
// protocol and ThreadSanitizer/ASan see real atomics.
#pragma once

#include <cstdint>

#include "dissect/common/device.h"

#if defined(__CUDACC__)
#include <cuda/atomic>
#endif

namespace dissect {

enum class Scope { cta, gpu, system };

#if defined(__CUDACC__)
template <Scope S>
struct cuda_scope;
template <>
struct cuda_scope<Scope::cta> {
  static constexpr cuda::thread_scope value = cuda::thread_scope_block;
};
template <>
struct cuda_scope<Scope::gpu> {
  static constexpr cuda::thread_scope value = cuda::thread_scope_device;
};
template <>
struct cuda_scope<Scope::system> {
  static constexpr cuda::thread_scope value = cuda::thread_scope_system;
};
template <Scope S, typename T>
__device__ inline cuda::atomic_ref<T, cuda_scope<S>::value> device_ref(T* p) {
  return cuda::atomic_ref<T, cuda_scope<S>::value>(*p);
}
#endif

template <Scope S, typename T>
DISSECT_HD inline T load_acquire(T* p) {
#if defined(__CUDA_ARCH__)
  return device_ref<S>(p).load(cuda::memory_order_acquire);
#else
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}

template <Scope S, typename T>
DISSECT_HD inline T load_relaxed(T* p) {
#if defined(__CUDA_ARCH__)
  return device_ref<S>(p).load(cuda::memory_order_relaxed);
#else
  return __atomic_load_n(p, __ATOMIC_RELAXED);
#endif
}

template <Scope S, typename T>
DISSECT_HD inline void store_release(T* p, T v) {
#if defined(__CUDA_ARCH__)
  device_ref<S>(p).store(v, cuda::memory_order_release);
#else
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
#endif
}

template <Scope S, typename T>
DISSECT_HD inline void store_relaxed(T* p, T v) {
#if defined(__CUDA_ARCH__)
  device_ref<S>(p).store(v, cuda::memory_order_relaxed);
#else
  __atomic_store_n(p, v, __ATOMIC_RELAXED);
#endif
}

template <Scope S, typename T>
DISSECT_HD inline T fetch_add(T* p, T v) {
#if defined(__CUDA_ARCH__)
  return device_ref<S>(p).fetch_add(v, cuda::memory_order_relaxed);
#else
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}

// Adds `v` to the 64-bit counter at `p` in global memory, discarding the old value: one `red`
// (a fire-and-forget reduction at L2). fetch_add's result register and generic address make the
// compiler emit an `atom` behind a state-space test on every call, in the engine's hot path.
template <Scope S>
DISSECT_HD inline void add_relaxed(uint64_t* p, uint64_t v) {
#if defined(__CUDA_ARCH__)
  if constexpr (S == Scope::system) {
    asm volatile("red.relaxed.sys.global.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
  } else if constexpr (S == Scope::gpu) {
    asm volatile("red.relaxed.gpu.global.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
  } else {
    asm volatile("red.relaxed.cta.global.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
  }
#else
  __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}

// The same for a 32-bit counter.
template <Scope S>
DISSECT_HD inline void add_relaxed(uint32_t* p, uint32_t v) {
#if defined(__CUDA_ARCH__)
  if constexpr (S == Scope::system) {
    asm volatile("red.relaxed.sys.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
  } else if constexpr (S == Scope::gpu) {
    asm volatile("red.relaxed.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
  } else {
    asm volatile("red.relaxed.cta.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
  }
#else
  __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}

// Stores `v` at `p` and returns what was there, relaxed.
template <Scope S, typename T>
DISSECT_HD inline T exchange(T* p, T v) {
#if defined(__CUDA_ARCH__)
  return device_ref<S>(p).exchange(v, cuda::memory_order_relaxed);
#else
  return __atomic_exchange_n(p, v, __ATOMIC_RELAXED);
#endif
}

#if !defined(__CUDA_ARCH__)
namespace detail {
// The host's fetch_max and fetch_min (the GCC builtins have neither): a relaxed CAS loop that
// stores `v` while `v` beats what *p holds (`beats(v, seen)`), and returns what was there.
template <typename T, typename Beats>
inline T fetch_extreme(T* p, T v, Beats beats) {
  T seen = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (beats(v, seen) && !__atomic_compare_exchange_n(p, &seen, v, true, __ATOMIC_RELAXED,
                                                        __ATOMIC_RELAXED)) {
  }
  return seen;
}
}  // namespace detail
#endif

template <Scope S, typename T>
DISSECT_HD inline T fetch_max(T* p, T v) {
#if defined(__CUDA_ARCH__)
  return device_ref<S>(p).fetch_max(v, cuda::memory_order_relaxed);
#else
  return detail::fetch_extreme(p, v, [](T a, T b) { return b < a; });
#endif
}

template <Scope S, typename T>
DISSECT_HD inline T fetch_min(T* p, T v) {
#if defined(__CUDA_ARCH__)
  return device_ref<S>(p).fetch_min(v, cuda::memory_order_relaxed);
#else
  return detail::fetch_extreme(p, v, [](T a, T b) { return a < b; });
#endif
}

// Strong compare-and-swap with acquire-release ordering; returns true when *p was `expected`.
template <Scope S, typename T>
DISSECT_HD inline bool compare_exchange(T* p, T expected, T desired) {
#if defined(__CUDA_ARCH__)
  return device_ref<S>(p).compare_exchange_strong(expected, desired,
                                                          cuda::memory_order_acq_rel);
#else
  return __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE);
#endif
}

// A release fence (PTX fence.acq_rel at scope S): orders this thread's earlier stores before its
// later stores, as seen by any observer in S.
template <Scope S>
DISSECT_HD inline void fence_release() {
#if defined(__CUDA_ARCH__)
  cuda::atomic_thread_fence(cuda::memory_order_release, cuda_scope<S>::value);
#else
  __atomic_thread_fence(__ATOMIC_RELEASE);
#endif
}

template <Scope S>
DISSECT_HD inline void fence_acquire() {
#if defined(__CUDA_ARCH__)
  cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda_scope<S>::value);
#else
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
#endif
}

// A sequentially consistent fence: __threadfence() (fence.sc.gpu) or __threadfence_system().
template <Scope S>
DISSECT_HD inline void fence_sequential() {
#if defined(__CUDA_ARCH__)
  if constexpr (S == Scope::system) {
    __threadfence_system();
  } else {
    __threadfence();
  }
#else
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

// Relax a spinning thread: the x86 pause hint on the host, a short sleep on the device.
DISSECT_HD inline void spin_pause() {
#if defined(__CUDA_ARCH__)
  __nanosleep(32);
#elif defined(__x86_64__)
  __builtin_ia32_pause();
#endif
}

}  // namespace dissect
