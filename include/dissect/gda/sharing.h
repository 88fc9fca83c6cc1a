// Who drives a QP: one thread (exclusive) or several (shared), and the bounded spin all waits use.
#pragma once

#include <cstdint>
#if !defined(__CUDA_ARCH__)
#include <sched.h>
#endif

#include "dissect/common/atomic.h"

namespace dissect::gda {

// exclusive: one thread drives the QP (no atomics on its counters). shared: several threads of one
// GPU (or host threads) reserve, publish, ring and poll it concurrently.
enum class Sharing { exclusive, shared };

template <Sharing S, typename T>
DISSECT_HD inline T counter_load(T* p) {
  if constexpr (S == Sharing::exclusive) return *p;
  return load_acquire<Scope::gpu>(p);
}

// The spin of every bounded wait: a pause, and on the host a yield every 64 spins, so that
// submitter threads outnumbering cores (CI has two) let the thread they wait for run.
struct Backoff {
  uint32_t spins = 0;
  DISSECT_HD void pause() {
    spin_pause();
#if !defined(__CUDA_ARCH__)
    if ((++spins & 63) == 0) sched_yield();
#endif
  }
};

}  // namespace dissect::gda
