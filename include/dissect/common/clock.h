// One nanosecond clock for host and device code.
//
// On the device it is %globaltimer, which every SM reads alike (its update step is coarse on some
// parts; the suite measures and records it). On the host it is CLOCK_MONOTONIC.
#pragma once

#include <cstdint>

#include "dissect/common/device.h"

#if !defined(__CUDA_ARCH__)
#include <time.h>
#endif

namespace dissect {

DISSECT_HD inline uint64_t now_ns() {
#if defined(__CUDA_ARCH__)
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#else
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
#endif
}

// Every spin in dissect is bounded by this, unless a caller passes its own bound.
inline constexpr uint64_t DEFAULT_WAIT_TIMEOUT_NS = 5'000'000'000ull;

}  // namespace dissect
