// Timing profiles of the NIC model: what the softnic adds to the time a WQE takes, so that a run
// can stand in for a particular NIC. `fast` adds nothing (the submitter is measured); `cx7-ib`
// models the paper's P-IB NIC (ConnectX-7, 200 Gb/s InfiniBand), each field calibrated to a figure
// the paper states. The engine applies a profile per window (engine/window.h): its payloads move no
// earlier than `doorbell_to_data_ns` (+ `payload_read_ns` for a pointer WQE) after the engine saw
// the doorbell that announced them, its CQEs appear `data_to_cqe_ns` after that, and the NIC's pipe
// (shared by every QP of the NIC) carries at most `message_rate_mps` messages and `goodput_gbps`
// payload per second. A profile only adds delay: where the model's own time is longer, results
// show the model's, and nic-ceiling says so.
#pragma once

#include <cstdint>
#include <string>

namespace dissect::softnic {

struct TimingProfile {
  uint32_t enabled;              // 0: `fast`, every field ignored
  uint32_t doorbell_to_data_ns;  // doorbell seen -> payload visible at the responder (inline)
  uint32_t payload_read_ns;      // extra for a pointer WQE: the NIC reads the payload over PCIe
  uint32_t data_to_cqe_ns;       // payload visible -> CQE visible (acknowledgement, CQE write)
  double message_rate_mps;       // NIC-wide message ceiling, million messages per second (0: none)
  double goodput_gbps;           // NIC-wide payload ceiling, GB/s (0: none)
  char name[32];
};

// `fast`, `cx7-ib`, or the path of a profile file: `key = value` lines (`#` comments) naming
// name, doorbell_to_data_ns, payload_read_ns, data_to_cqe_ns, message_rate_mps, goodput_gbps.
// Throws InvalidArgument naming the profile, the line and the value.
TimingProfile timing_profile(const std::string& name_or_path);
const char* profile_name(const TimingProfile& profile);

}  // namespace dissect::softnic
