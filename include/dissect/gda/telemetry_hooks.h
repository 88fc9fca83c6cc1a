// Where mini-gda calls telemetry: at post, at the doorbell, at every CQ poll, and when a CQE
// retires a range of WQEBBs. With `qp.telemetry` null (telemetry off, or the QP has no slot) each
// hook is one predictable branch.
//
// Completion latency is post -> the CQE that retires the WQE (unsignalled WQEs included): the
// post stamps a marker into the WQE's start slot of `qp.post_stamps` (1, or the post time when the
// WQE is in the 1-in-N sample) and the poller that retires the range reads and clears it. Slots are
// owned in turn by the submitter (until the doorbell) and by the one poller whose fetch_max moved
// cons_idx past them, so a slot never has two writers.
#pragma once

#include <cstdint>

#include "dissect/nic/handles.h"
#include "dissect/telemetry/counters.h"

namespace dissect::gda {

// -DDISSECT_WITH_TELEMETRY=OFF builds the data path with no hook at all: the reference against
// which docs/telemetry.md measures what a disabled (null-slot) hook costs.
#if defined(DISSECT_TELEMETRY_COMPILED_OUT)
inline constexpr bool TELEMETRY_COMPILED = false;
#else
inline constexpr bool TELEMETRY_COMPILED = true;
#endif

inline constexpr uint64_t POSTED_NOT_SAMPLED = 1;

DISSECT_HD inline void note_post(const nic::QpHandle& qp, uint64_t start, uint64_t bytes,
                                 uint8_t opcode, uint32_t ds) {
  if (!TELEMETRY_COMPILED || qp.telemetry == nullptr) return;
  const bool sampled = telemetry::on_post(qp.telemetry, telemetry::PostInfo{bytes, opcode, ds * 16});
  uint64_t marker = POSTED_NOT_SAMPLED;
  if (sampled) {
    const uint64_t now = telemetry::clock_ns();
    marker = now > POSTED_NOT_SAMPLED ? now : POSTED_NOT_SAMPLED + 1;
  }
  qp.post_stamps[start & qp.sq.mask()] = marker;
}

// Counts the WQEs that start in [from, to) and announces them as one doorbell.
DISSECT_HD inline void note_doorbell(const nic::QpHandle& qp, uint64_t from, uint64_t to) {
  if (!TELEMETRY_COMPILED || qp.telemetry == nullptr) return;
  uint64_t wqes = 0;
  for (uint64_t i = from; i < to; ++i) wqes += qp.post_stamps[i & qp.sq.mask()] != 0;
  telemetry::on_doorbell(qp.telemetry, wqes);
}

// One CQE retired [from, to): each WQE that starts there is completed, the sampled ones with
// their latency; the counts go in with one add each.
DISSECT_HD inline void note_retired(const nic::QpHandle& qp, uint64_t from, uint64_t to) {
  if (!TELEMETRY_COMPILED || qp.telemetry == nullptr) return;
  uint64_t wqes = 0;
  uint64_t now = 0;
  for (uint64_t i = from; i < to; ++i) {
    uint64_t* slot = &qp.post_stamps[i & qp.sq.mask()];
    const uint64_t marker = *slot;
    if (marker == 0) continue;
    *slot = 0;
    ++wqes;
    if (marker != POSTED_NOT_SAMPLED) {
      if (now == 0) now = telemetry::clock_ns();
      telemetry::record_latency_sample(qp.telemetry, now > marker ? now - marker : 0);
    }
  }
  telemetry::on_completions(qp.telemetry, wqes, 1);
}

DISSECT_HD inline void note_poll(const nic::QpHandle& qp) {
  if (TELEMETRY_COMPILED) telemetry::on_cq_poll(qp.telemetry);
}
DISSECT_HD inline void note_error(const nic::QpHandle& qp) {
  if (TELEMETRY_COMPILED) telemetry::on_cq_error(qp.telemetry);
}

}  // namespace dissect::gda
