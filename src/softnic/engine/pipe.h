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
// A claim whose answer is read later (claim_end): the atomics are issued, and the caller does other
// work while their round trip runs (hold_lone_wqe builds the CQE meanwhile). {0, 0}: none made.
struct PendingClaim {
  uint64_t before;  // the pipe before this claim's share (fetch_add's answer)
  uint64_t units;
};

// The pipe word is in global memory (NicTables, a peer GPU's included): global-space atomics, a
// `red` for the catch-up and one `atom` whose answer nothing waits for before claim_end.
template <Scope S>
DISSECT_HD inline PendingClaim issue_claim(uint64_t* pipe, uint64_t units) {
  max_relaxed<S>(pipe, now_ns() * PIPE_UNITS_PER_NS);
  return PendingClaim{fetch_add_global<S>(pipe, units), units};
}

// When the claim `c` ends, in ns (0 for none).
DISSECT_HD inline uint64_t claim_end(const PendingClaim& c) { return (c.before + c.units) / PIPE_UNITS_PER_NS; }

template <Scope S>
DISSECT_HD inline uint64_t claim_pipe(uint64_t* pipe, uint64_t units) {
  return claim_end(issue_claim<S>(pipe, units));
}

// A pacing whose pipe claim is still travelling: `ready` the doorbell's latency (and whatever was
// read already), the payload's date the later of it and the claim's end (pace_ready).
struct PendingPace {
  uint64_t ready;
  PendingClaim claim;
};

DISSECT_HD inline uint64_t pace_ready(const PendingPace& p) {
  const uint64_t end = claim_end(p.claim);
  return end > p.ready ? end : p.ready;
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
