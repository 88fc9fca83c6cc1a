// DC WRITEs under a timing profile (profile.h): what a window's pacing (window.h pace_payloads)
// does for RC, for a batch of DC WQEs (dc_batch.h, the parallel engines) or the one DC WQE that
// execute_dc_write runs alone (the reference service_qp), plus the DC connect handshake the RC
// path has no counterpart of. Only called where the profile is enabled: `fast` reads no clock and
// adds nothing here.
//
// The connect rule (a model, stated): a DCI is connected to at most one DCT. A WRITE to another
// DCT than the one it is connected to, or by a DCI that is not connected, first connects
// (dc_connect_ns later the payload may move). A DCI that has nothing announced after the WQE it
// executes disconnects (a ConnectX DCI releases its DCT once nothing is outstanding, so the next
// request connects again). So one put at a time pays one connect each, destination switching
// pays one per switch, and a burst to one DCT pays one.
#pragma once

#include <cstdint>

#include "connection_state.h"
#include "phases.h"
#include "pipe.h"
#include "table_scope.h"

namespace dissect::softnic {

// The DCI's connection tag for DCT `dctn` of NIC `nic_id` (QpContext::dc_connected); never 0.
// DCT numbers are below 2^20 (DCTN_BASE + max_dcts), NIC ids below 2^11 in practice; a tag that
// collided would only spare one connect.
DISSECT_HD inline uint32_t dc_connection_tag(uint32_t nic_id, uint32_t dctn) {
  return 0x80000000u | (dctn ^ (nic_id << 20));
}

// The DC target a DC WRITE paces against: its NIC and DCT (resolved by the WQE's checks), and the
// DCT's number and the DCI's connection tag for it (dc_connection_tag), which the caller has from
// the WQE's address vector (the LID is the target NIC's id + 1: lid_of_nic; a WQE whose checks
// passed names the DCT's number), so pacing reads neither from table memory.
struct DcPaceTarget {
  NicTables* nic;
  DctContext* dct;
  uint32_t dctn;
  uint32_t tag;
};

// Claims the pipe(s) and applies the connect rule; returns when the payload may move (ns): the
// doorbell's latency (doorbell_to_data_ns, + payload_read_ns for a pointer payload, +
// dc_connect_ns for a connect) or the pipe's slot, the later, which the caller waits for
// (execute_dc_write) or holds the WQE until (the DC lone window, dc_batch.h). The CQE follows
// data_to_cqe_ns after it. `p` and `rates`: `local`'s profile and pipe_rates(p), from wherever the
// caller keeps them (a Window holds both in shared memory).
// Inline: out of line, its call and return and its two loads of the target (the DCT's number and
// its NIC's id, now in `target`) cost a DC lone window 0.3 us of put+completion under cx7-ib
// (H100, 2026-12-06).
// `connections` false (a DC lone window): the DCI's context lookup is left to
// dc_charge_send_lookup after the CQE; the pipes and the target's receive side are claimed here.
DISSECT_HD inline uint64_t pace_dc_write(const TimingProfile& p, const PipeRates& rates, NicTables& local,
                                         QpContext& qp, uint64_t start, uint32_t wqebbs,
                                         const DcPaceTarget& target, bool pointer, uint64_t bytes,
                                         bool connections = true) {
  DISSECT_PHASE_START;
  const bool connect = qp.dc_connected != target.tag;
  qp.dc_connected = start + wqebbs < qp.sq_target ? target.tag : 0;  // idle after this WQE: disconnected
  // Counted at the DCT, which DCIs of several engine warps or threads may connect to at once.
  if (connect) add_relaxed<Scope::system>(&target.dct->connects, 1u);  // a reduction: nothing waits for it
  uint64_t ready = dc_data_ready_ns(p, qp.doorbell_rung_ns, pointer, connect ? 1 : 0);
  DISSECT_PHASE(17);
  uint64_t slot = 0;
  // A lone window's lookup after its CQE with the target on this NIC leaves only the pipe's
  // claim: made here, since the out-of-line call cost ~2,200 cycles for it (instruction fetch;
  // phase counters, H200, 2026-12-03).
  if (connection_model(p) && (connections || target.nic != &local)) {
    slot = dc_connection_state(local, qp.qpn, &qp.dc_destination, *target.nic, target.dctn, bytes, connections);
  } else {
    const double units = pipe_ns(rates, 1, static_cast<double>(bytes)) * PIPE_UNITS_PER_NS;
    if (units > 0) slot = claim_pipe<TABLE_SCOPE>(&local.pipe_busy_until, static_cast<uint64_t>(units));
  }
  if (slot > ready) ready = slot;
  DISSECT_PHASE(18);
  return ready;
}

}  // namespace dissect::softnic
