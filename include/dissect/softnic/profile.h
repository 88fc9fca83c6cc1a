// Timing profiles of the NIC model: what the softnic adds to the time a WQE takes, so that a run
// can stand in for a particular NIC. `fast` adds nothing (the submitter is measured); `cx7-ib`
// models the paper's P-IB NIC (ConnectX-7, 200 Gb/s InfiniBand), each field calibrated to a figure
// the paper states. The engine applies a profile per window (engine/window.h): its payloads move no
// earlier than `doorbell_to_data_ns` (+ `payload_read_ns` for a pointer WQE) after the engine saw
// the doorbell that announced them, its CQEs appear `data_to_cqe_ns` after that, and the NIC's pipe
// (shared by every QP of the NIC) carries at most `message_rate_mps` messages and `goodput_gbps`
// payload per second (pipe_ns). A profile only adds delay: where the model's own time is longer, results
// show the model's, and nic-ceiling says so.
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
  char name[32];
};

// Nanoseconds the NIC's pipe is busy with `messages` messages of `bytes` payload in all. Message
// processing and the link are stages of one pipeline, so it is the slower of the two, not their
// sum (the sum held cx7-ib at 240 of its 260 Mmsg/s at 8 B). The link carries goodput_gbps of
// payload in full MTU packets; each packet adds packet_header_bytes on the wire, so short messages
// fill it with headers (packets counted as one per message plus one per MTU of payload).
DISSECT_HD inline double pipe_ns(const TimingProfile& p, double messages, double bytes) {
  const double for_messages = p.message_rate_mps > 0 ? messages * 1e3 / p.message_rate_mps : 0;
  double for_link = 0;
  if (p.goodput_gbps > 0) {
    const double header = p.packet_header_bytes;
    const double packets = messages + (p.mtu_bytes > 0 ? bytes / p.mtu_bytes : 0);
    const double wire_gbps = p.mtu_bytes > 0 ? p.goodput_gbps * (p.mtu_bytes + header) / p.mtu_bytes : p.goodput_gbps;
    for_link = (bytes + header * packets) / wire_gbps;
  }
  return for_messages > for_link ? for_messages : for_link;
}

// `fast`, `cx7-ib`, or the path of a profile file: `key = value` lines (`#` comments) naming
// name, doorbell_to_data_ns, payload_read_ns, data_to_cqe_ns, message_rate_mps, goodput_gbps,
// packet_header_bytes, mtu_bytes.
// Throws InvalidArgument naming the profile, the line and the value.
TimingProfile timing_profile(const std::string& name_or_path);
const char* profile_name(const TimingProfile& profile);

}  // namespace dissect::softnic
