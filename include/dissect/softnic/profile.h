// Timing profiles of the NIC model: what the softnic adds to the time a WQE takes, so that a run
// can stand in for a particular NIC. `fast` adds nothing (the submitter is measured); `cx7-ib`
// models the paper's P-IB NIC (ConnectX-7, 200 Gb/s InfiniBand), each field calibrated to a figure
// the paper states. The engine applies a profile per window (engine/window.h): its payloads move no
// earlier than `doorbell_to_data_ns` (+ `payload_read_ns` for a pointer WQE) after the engine saw
// the doorbell that announced them, its CQEs appear `data_to_cqe_ns` after that, and the NIC's pipe
// (shared by every QP of the NIC) carries at most `message_rate_mps` messages and `goodput_gbps`
// payload per second (pipe_ns). A profile only adds delay: where the model's own time is longer, results
// show the model's, and nic-ceiling says so.
//
// The connection-state model (§4.3.3, Figure 10; a model, not a ConnectX): the NIC keeps
// `qp_cache_entries` QP contexts on chip (engine/connection_state.h: direct-mapped by a hash of the
// QP or DCT number). Send (requester) processing looks up the requester QP's context in its own
// NIC's cache, receive (responder) processing the responder QP's (or DCT's) in the responder NIC's,
// once per window of up to 32 WQEs of one QP; a miss adds its side's miss cost to the pipe of the
// NIC that missed. Receiving also costs the responder's pipe `receive_message_rate_mps` per message
// (send and receive processing share one pipe per NIC, so a NIC that sends and receives pays both).
#pragma once

#include <cstdint>
#include <string>

#include "dissect/common/device.h"

namespace dissect::softnic {

struct TimingProfile {
  uint32_t enabled;              // 0: `fast`, every field ignored
  uint32_t doorbell_to_data_ns;  // doorbell seen -> payload visible at the responder (inline)
  uint32_t payload_read_ns;      // extra for a pointer WQE: the NIC reads the payload over PCIe
  uint32_t data_to_cqe_ns;       // payload visible -> CQE visible (acknowledgement, CQE write)
  double message_rate_mps;       // NIC-wide message ceiling, million messages per second (0: none)
  double goodput_gbps;           // NIC-wide payload ceiling in full MTU packets, GB/s (0: none)
  uint32_t packet_header_bytes;  // wire bytes a packet adds to its payload (headers, CRCs)
  uint32_t mtu_bytes;            // payload bytes per packet (0: one packet per message)
  // Connection-state model (above). 0 entries: no model (no lookup, no receive cost, no load).
  uint32_t qp_cache_entries;         // QP / DCT contexts the NIC holds on chip
  uint32_t send_context_miss_ns;     // pipe time a requester context fetch costs (0: no lookup)
  uint32_t receive_context_miss_ns;  // pipe time a responder context fetch costs (0: no lookup)
  // DC: a DCI connects to its DCT before the first write to it (the DC connect handshake); the
  // payload of a DC WRITE that needs one moves this much later (engine/dc_timing.h: when the DCI
  // names another DCT, or had nothing outstanding, so its last connection was torn down).
  uint32_t dc_connect_ns;
  double receive_message_rate_mps;   // responder processing, M msg/s of the pipe (0: free)
  // The part of data_to_cqe_ns that the engine's own CQE publication takes on the machine that runs
  // it: its release store's way to a GPU poller (nic-ceiling --nic-profile fast reports it as
  // `stamp to CQE seen`). A NIC's data_to_cqe_ns already holds its CQE write and the poller's
  // sight of it, so the engine releases the CQE this much sooner, never before its payload:
  // without it a modelled latency measured from the doorbell to the CQE seen counts that hop
  // twice. `fast`: 0; `cx7-ib`: 770 (profile.cpp says why).
  uint32_t cqe_transit_ns;
  // WQEs the NIC's send scheduler serves from one send queue before it turns to the next queue with
  // work (0: the engine's own SERVICE_BUDGET, engine/serve.h), in whole windows: a visit ends with
  // the first window that reaches it. Under the connection-state model it decides what a backlog
  // does to misses: a queue served a quantum at a time pays a lookup (and, on a crowded cache, a
  // miss) per quantum however deep its backlog, as the paper's NIC did at 32 writes a visit
  // (profile.cpp). A QP alone on its engine lane keeps SOLE_QP_BUDGET: no other queue waits.
  uint32_t scheduling_quantum_wqes;
  char name[32];
};

// When a window whose payloads could move at `data_ready` (ns) releases its CQEs.
DISSECT_HD inline uint64_t cqe_release_ns(const TimingProfile& p, uint64_t data_ready) {
  return data_ready + (p.data_to_cqe_ns > p.cqe_transit_ns ? p.data_to_cqe_ns - p.cqe_transit_ns : 0);
}

// When the payload of a WQE whose doorbell was rung at `rung` (its ring date: the engines'
// engine/window.h ring_date, the date RC's windows pace from too) may move, by the profile's
// latency alone (an idle pipe): doorbell_to_data_ns, payload_read_ns for a pointer payload, and
// `connects` DC connects (each dc_connect_ns: a DCI holds one DCT at a time, so the handshakes of
// one batch follow one another). The same sum as RC's window (pace_payloads) plus the connects,
// so one idle DC put's modelled doorbell-to-CQE is RC's plus dc_connect_ns.
DISSECT_HD inline uint64_t dc_data_ready_ns(const TimingProfile& p, uint64_t rung, bool pointer,
                                            uint32_t connects) {
  return rung + p.doorbell_to_data_ns + (pointer ? p.payload_read_ns : 0) +
         uint64_t{connects} * p.dc_connect_ns;
}

// The modelled doorbell-to-CQE of one WQE on an idle NIC (no pipe wait), to the CQE seen, as the
// paper states it: RC's (`connects` 0) or a DC put's (1 for a put that finds its DCI idle, as
// gpu-latency's does). Used by the tests and the experiments' arithmetic.
DISSECT_HD inline uint64_t modelled_doorbell_to_cqe_ns(const TimingProfile& p, bool pointer, uint32_t connects) {
  return dc_data_ready_ns(p, 0, pointer, connects) + p.data_to_cqe_ns;
}

// When the engines release that CQE, after the ring date: the same less the engine's own CQE hop
// (cqe_transit_ns), never before the payload's date (cqe_release_ns). The engines wait for exactly
// this time; its CQE is stamped no earlier.
DISSECT_HD inline uint64_t modelled_cqe_release_ns(const TimingProfile& p, bool pointer, uint32_t connects) {
  return cqe_release_ns(p, dc_data_ready_ns(p, 0, pointer, connects));
}

// pipe_ns's rates, divided out of the profile once: on the GPU each FP64 division is a software
// sequence, and pipe_ns's four cost a paced lone WQE ~1,200 cycles (phase 17, H200, 2026-12-03).
struct PipeRates {
  double ns_per_message;    // 0: no message ceiling
  double ns_per_wire_byte;  // 0: no link ceiling
  double packets_per_byte;  // 1 / mtu_bytes (0: one packet per message)
  double header_bytes;      // packet_header_bytes
};

DISSECT_HD inline PipeRates pipe_rates(const TimingProfile& p) {
  PipeRates r{0, 0, 0, static_cast<double>(p.packet_header_bytes)};
  if (p.message_rate_mps > 0) r.ns_per_message = 1e3 / p.message_rate_mps;
  if (p.mtu_bytes > 0) r.packets_per_byte = 1.0 / p.mtu_bytes;
  if (p.goodput_gbps > 0) {
    const double wire_gbps =
        p.mtu_bytes > 0 ? p.goodput_gbps * (p.mtu_bytes + r.header_bytes) / p.mtu_bytes : p.goodput_gbps;
    r.ns_per_wire_byte = 1.0 / wire_gbps;
  }
  return r;
}

// Nanoseconds the NIC's pipe is busy with `messages` messages of `bytes` payload in all. Message
// processing and the link are stages of one pipeline, so it is the slower of the two, not their
// sum (the sum held cx7-ib at 240 of its 260 Mmsg/s at 8 B). The link carries goodput_gbps of
// payload in full MTU packets; each packet adds packet_header_bytes on the wire, so short messages
// fill it with headers (packets counted as one per message plus one per MTU of payload).
DISSECT_HD inline double pipe_ns(const PipeRates& r, double messages, double bytes) {
  const double for_messages = messages * r.ns_per_message;
  const double packets = messages + bytes * r.packets_per_byte;
  const double for_link = (bytes + r.header_bytes * packets) * r.ns_per_wire_byte;
  return for_messages > for_link ? for_messages : for_link;
}

DISSECT_HD inline double pipe_ns(const TimingProfile& p, double messages, double bytes) {
  return pipe_ns(pipe_rates(p), messages, bytes);
}

// The largest QP-context cache a profile may ask for (4 Mi tags, 16 MiB of NIC table memory).
inline constexpr uint32_t MAX_QP_CACHE_ENTRIES = 1u << 22;

// Whether the profile models connection state (a window then looks up QP contexts).
DISSECT_HD inline bool connection_model(const TimingProfile& p) {
  return p.enabled != 0 && p.qp_cache_entries != 0;
}

// `fast`, `cx7-ib`, or the path of a profile file: `key = value` lines (`#` comments) naming
// name, doorbell_to_data_ns, payload_read_ns, data_to_cqe_ns, message_rate_mps, goodput_gbps,
// packet_header_bytes, mtu_bytes, qp_cache_entries, send_context_miss_ns,
// receive_context_miss_ns, receive_message_rate_mps, dc_connect_ns, cqe_transit_ns,
// scheduling_quantum_wqes.
// Throws InvalidArgument naming the profile, the line and the value.
TimingProfile timing_profile(const std::string& name_or_path);
const char* profile_name(const TimingProfile& profile);

}  // namespace dissect::softnic
