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

// A claim of the pipe: what the pipe's word held when `units` were added to it (quarter ns).
struct PipeClaim {
  uint64_t before;
  uint64_t units;  // 0: nothing claimed
};

// Claims `units` of the pipe at `pipe`: it never lags the clock, then the share is added (two
// atomics, no retry loop: a compare-and-swap contended by every warp of the NIC cost microseconds
// a window). `S`: the scope of the pipe's other claimants (system for another GPU's NIC, reached
// through peer memory). The claim's end is read from it (claim_end_ns) only where it is needed, so
// that a claim made before a WQE is read overlaps the WQEBB's round trip (window.h,
// claim_message_stage).
template <Scope S>
DISSECT_HD inline PipeClaim begin_pipe_claim(uint64_t* pipe, uint64_t units) {
  fetch_max<S>(pipe, now_ns() * PIPE_UNITS_PER_NS);
  return PipeClaim{fetch_add<S>(pipe, units), units};
}

// When a claim ends, in ns.
DISSECT_HD inline uint64_t claim_end_ns(const PipeClaim& c) { return (c.before + c.units) / PIPE_UNITS_PER_NS; }

// Claims `units` and returns when the claim ends, in ns.
template <Scope S>
DISSECT_HD inline uint64_t claim_pipe(uint64_t* pipe, uint64_t units) {
  return claim_end_ns(begin_pipe_claim<S>(pipe, units));
}

// Claims `units` (fractional units: the pipe's cost) of which `prepaid` claimed its share already
// (a lone window's message stage: window.h, claim_message_stage); returns when the whole ends, in
// ns, 0 for nothing claimed. The rest is a second claim, after whatever others claimed meanwhile.
template <Scope S>
DISSECT_HD inline uint64_t claim_rest(uint64_t* pipe, double units, const PipeClaim& prepaid) {
  uint64_t end = 0;
  if (prepaid.units != 0) {  // a failed WQE's cost is 0: its claimed message stands for its fetch
    end = claim_end_ns(prepaid);
    units -= static_cast<double>(prepaid.units);
    if (units < 1) return end;  // under a unit: the prepaid claim covers it
  }
  if (units > 0 && pipe != nullptr) {
    const uint64_t rest = claim_pipe<S>(pipe, static_cast<uint64_t>(units));
    if (rest > end) end = rest;
  }
  return end;
}

// Gives a claim back (the WQE it was made for went to another window, which claims its own): the
// pipe's word less its units. Claims added after it keep their slots, each as late as it was
// given, so the pipe never runs ahead of what was claimed; a word pulled below the clock is lifted
// by the next claim's fetch_max.
template <Scope S>
DISSECT_HD inline void return_pipe_claim(uint64_t* pipe, const PipeClaim& c) {
  if (c.units != 0) add_relaxed<S>(pipe, uint64_t{0} - c.units);
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
