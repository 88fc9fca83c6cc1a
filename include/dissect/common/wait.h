// The one bounded wait of dissect, and the spin inside it.
//
//   BoundedWait wait(timeout_ns);
//   while (!attempt()) {
//     if (wait.expired()) return report_timeout(what, ..., wait.waited_ns());
//   }
//
// The clock starts at the first failed attempt, so a wait that succeeds at once never reads it.
// On the host the spin counts itself in a process-wide census: while more threads spin than the
// process may use cores, every spin yields (each one would otherwise hold the core that the thread
// it waits for needs), and the census says so afterwards (oversubscription(), which the suite
// records in every result).
#pragma once

#include <cstdint>

#include "dissect/common/atomic.h"
#include "dissect/common/clock.h"
#include "dissect/common/device.h"

#if !defined(__CUDA_ARCH__)
#include <sched.h>

#include <atomic>
#endif

namespace dissect {

#if !defined(__CUDA_ARCH__)
struct SpinCensus {
  std::atomic<uint32_t> spinning{0};  // host threads inside a Backoff now
  std::atomic<uint32_t> peak{0};      // the most at once since the process started
  std::atomic<bool> oversubscribed{false};  // peak > cores at some point
};

inline SpinCensus& spin_census() {
  static SpinCensus census;
  return census;
}

// Starts a new period of observation (one experiment): the peak restarts from the spinners of now.
inline void restart_spin_census() {
  SpinCensus& census = spin_census();
  const uint32_t now = census.spinning.load(std::memory_order_relaxed);
  census.peak.store(now, std::memory_order_relaxed);
  census.oversubscribed.store(false, std::memory_order_relaxed);
}

// The CPUs this process may run on (its affinity mask, which taskset and cgroups narrow).
inline uint32_t usable_cores() {
  static const uint32_t cores = [] {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 1u;  // assume the worst: yield early
    return static_cast<uint32_t>(CPU_COUNT(&set) > 0 ? CPU_COUNT(&set) : 1);
  }();
  return cores;
}
#endif

// The spin of every bounded wait: a short sleep on the device; on the host the pause hint and a
// yield every 64 spins, or every spin while spinners outnumber cores.
class Backoff {
 public:
  DISSECT_HD Backoff() {}
  DISSECT_HD ~Backoff() {
#if !defined(__CUDA_ARCH__)
    if (counted_) spin_census().spinning.fetch_sub(1, std::memory_order_relaxed);
#endif
  }
  Backoff(const Backoff&) = delete;
  Backoff& operator=(const Backoff&) = delete;

  DISSECT_HD void pause() {
    spin_pause();
#if !defined(__CUDA_ARCH__)
    if (!counted_) enter();
    const bool crowded = spin_census().spinning.load(std::memory_order_relaxed) > usable_cores();
    if (crowded || (++spins_ & 63) == 0) sched_yield();
#endif
  }

 private:
#if !defined(__CUDA_ARCH__)
  void enter() {
    counted_ = true;
    SpinCensus& census = spin_census();
    const uint32_t now = census.spinning.fetch_add(1, std::memory_order_relaxed) + 1;
    uint32_t peak = census.peak.load(std::memory_order_relaxed);
    while (now > peak && !census.peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
    if (now > usable_cores()) census.oversubscribed.store(true, std::memory_order_relaxed);
  }
#endif
  uint32_t spins_ = 0;
  bool counted_ = false;
};

class BoundedWait {
 public:
  DISSECT_HD explicit BoundedWait(uint64_t timeout_ns = DEFAULT_WAIT_TIMEOUT_NS)
      : timeout_ns_(timeout_ns) {}

  // Call after a failed attempt: true once the bound has passed, otherwise spins once and false.
  DISSECT_HD bool expired() {
    if (over()) return true;
    backoff_.pause();
    return false;
  }

  // The bound without the spin, for a loop whose spin is its own (a proxy worker's idle policy,
  // the host engine's start, which yields on every check): true once the bound has passed.
  DISSECT_HD bool over() {
    const uint64_t now = now_ns();
    if (began_ == 0) began_ = now;
    waited_ns_ = now - began_;
    return waited_ns_ > timeout_ns_;
  }

  DISSECT_HD uint64_t waited_ns() const { return waited_ns_; }

 private:
  uint64_t timeout_ns_;
  uint64_t began_ = 0;
  uint64_t waited_ns_ = 0;
  Backoff backoff_;
};

}  // namespace dissect
