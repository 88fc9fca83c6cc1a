// The NIC's pipe under a timing profile (profile.h): one busy-until word per NIC
// (NicTables::pipe_busy_until) that every window of the NIC claims its share of, and the wait for
// a modelled time. Used by the window's pacing (window.h) and by the connection-state model
// (connection_state.h), which also claims a responder NIC's pipe.
#pragma once

#include <cstdint>

#include "dissect/common/atomic.h"
#include "dissect/common/clock.h"

namespace dissect::softnic {

// NicTables::pipe_busy_until counts quarter nanoseconds: %globaltimer counts from the epoch (about
// 1.8e18 ns), so finer units would overflow 64 bits.
inline constexpr uint64_t PIPE_UNITS_PER_NS = 4;

// Claims `units` of the pipe at `pipe`: it never lags the clock, then the share is added (two
// atomics, no retry loop: a compare-and-swap contended by every warp of the NIC cost microseconds
// a window). Returns when the claim ends, in ns. `S`: the scope of the pipe's other claimants
// (system for another GPU's NIC, reached through peer memory).
template <Scope S>
DISSECT_HD inline uint64_t claim_pipe(uint64_t* pipe, uint64_t units) {
  fetch_max<S>(pipe, now_ns() * PIPE_UNITS_PER_NS);
  return (fetch_add<S>(pipe, units) + units) / PIPE_UNITS_PER_NS;
}

// Waits until the clock reads `t` ns. A pure spin on the GPU: a sleeping warp's wake-up is coarser
// than the waits a profile asks for.
DISSECT_HD inline void wait_until(uint64_t t) {
  while (now_ns() < t) {
#if !defined(__CUDA_ARCH__)
    spin_pause();
#endif
  }
}

}  // namespace dissect::softnic
