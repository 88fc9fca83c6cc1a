// A paced lone WQE in flight: fetched, checked and retired by the engine, its payload and its CQE
// waiting for the dates the timing profile gives them (lone.h, hold_lone_wqe / release_in_flight).
//
// Why: a NIC's pipeline does not stop while a message's latency runs. Waiting for those dates in
// place (the staged window's way) kept the engine warp in its wait and in the WQE's bookkeeping
// after it, so that under cx7-ib the next doorbell was dated 0.8-1.0 us after its store and the
// engine came late to the next wait (docs/softnic-engine.md, "The paced lone window"). Held, the
// warp goes back to its passes, watches the doorbells, and releases the payload and the CQE when
// their dates come (the engine loop: release_due_in_flight each pass, settle_in_flight before any
// other window of the warp, so that every CQE the warp writes keeps its order). Only a WQE whose CQE
// date lies IN_FLIGHT_HOLD_MIN_NS ahead is held: nearer, the loop comes back to it late (below).
#pragma once

#include <cstdint>

#include "execute.h"

namespace dissect::softnic {

enum InFlightStage : uint8_t {
  IN_FLIGHT_NONE,     // nothing held
  IN_FLIGHT_PAYLOAD,  // the payload (if any), then the CQE (if any), then the lookup
  IN_FLIGHT_CQE,      // the payload moved: the CQE (if any), then the lookup
};

// The requester's context lookup a held WQE makes after its CQE (connection_state.h: RC's
// charge_connection_state, DC's dc_charge_send_lookup); none without the connection-state model.
enum InFlightLookup : uint8_t { IN_FLIGHT_NO_LOOKUP, IN_FLIGHT_RC_LOOKUP, IN_FLIGHT_DC_LOOKUP };

// The inline payload bytes a held WQE can carry: a DC WRITE's in two WQEBBs after a compact
// address vector (dc_batch.h), the largest lone one.
inline constexpr uint32_t IN_FLIGHT_INLINE_BYTES = 2 * 64 - 52;

struct InFlight {
  uint64_t data_ns;  // when the payload moves
  uint64_t cqe_ns;   // when the CQE is released (>= data_ns)
  WritePlan plan;    // the payload; plan.source null: `bytes` (an inline payload); length 0: none
  alignas(16) uint32_t bytes[IN_FLIGHT_INLINE_BYTES / 4];
  // The CQE: its body written into its slot at the hold (hold_cqe), from what the QP's copy held
  // when the WQE was fetched; at the release only its stamp (stamp_cqe) and its last word.
  mlx5::mlx5_cqe64* entry;  // null: no CQE (an unsignalled WRITE)
  uint32_t cqe_tail;        // the last word publish_cqe stores
  uint64_t doorbell_rung_ns, doorbell_seen_ns;
  uint32_t qpn;
  // The DC lookup's operands (IN_FLIGHT_DC_LOOKUP): the DCI's NIC, its destination word in its
  // copy and in its QpContext, the target NIC and DCT number.
  NicTables* local;
  uint32_t* copy_destination;
  uint32_t* qp_destination;
  const NicTables* target;
  uint32_t dctn;
  uint64_t held_ns;  // when it was held (phase counters only: engine/phases.h 32, 33)
  uint8_t stage;   // InFlightStage
  uint8_t system;  // the CQE's observers are beyond the engine's GPU (publish_cqe's scope)
  uint8_t lookup;  // InFlightLookup
};

// How near its date a held step is done in the pass that finds it, by spinning to the date: an
// idle pass of the GPU engine is ~0.23 us (455 cycles at 1.98 GHz, phase counters), so a step
// due within this would otherwise wait up to a pass more.
inline constexpr uint64_t IN_FLIGHT_SPIN_NS = 500;

// How far ahead a held WQE's CQE date must lie for the engine loop to release it: nearer, the
// lone window releases it in place. From the hold to the loop's next release step the H200's
// engine warp took 2.5 us (phase 33, cx7-ib, 2026-12-03): the lone window's return, the pass's end
// and the next pass's watch, code the warp runs once a WQE, so a date within that came late by
// the difference (cx7-ib put+completion 7.6-7.9 us held against 6.0-6.7 in place, H200).
inline constexpr uint64_t IN_FLIGHT_HOLD_MIN_NS = 3000;

}  // namespace dissect::softnic
