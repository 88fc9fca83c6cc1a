// A QP's telemetry slot for GPU submitters: the counter block and the post stamps live in GPU
// memory, are updated there by the device hooks (nic/telemetry_policy.h), and are copied back and
// merged into the QP's host slot, which the NICs' observer (nic/observer.h: telemetry) hands out,
// when the PE finalises.
//
// Contract
// - Who calls: a provider whose QPs are driven by GPU threads (the softnic GPU engine's QPs), once
//   at QP creation (open) from the control path; handle() then hands counters() and post_stamps()
//   to the kernels. Both are null when telemetry is off or the QP got no slot: the hooks are then
//   no-ops, as on the host.
// - Channel: for mini-gda, the QPs driven by one CTA (docs/telemetry.md); the caller passes the
//   QP's QpAttributes::telemetry_channel (negative means 0).
// - Memory: one allocation of sizeof(QpCounters) + 8 B per send-queue WQEBB, made and freed through
//   the QP's nic::Nic (for the softnic GPU engine: zero-filled by a copy, freed with the engine
//   stopped around it), on the Nic's device. The host submitters of such a QP would write GPU
//   memory: its handle is for GPU threads only.
// - Gathering: a device-to-host copy on a private cudaStreamNonBlocking stream, never a device-wide
//   synchronisation (the engine kernel never returns). It runs once, when the observer finalises
//   (telemetry's Session::finalize(); the kernels that use the block must have finished by then),
//   or from the destructor if the QP goes away first. Traffic after the gather is not counted.
// - Failure: nothing here throws; a block that cannot be made or read back is reported on stderr
//   and its QP keeps zero counts.
#pragma once

#include <cstdint>
#include <string>

#include "dissect/nic/nic.h"
#include "dissect/nic/observer.h"
#include "dissect/nic/qp_counters.h"

namespace dissect::softnic {

class GpuQpSlot {
 public:
  GpuQpSlot() = default;
  ~GpuQpSlot();
  GpuQpSlot(const GpuQpSlot&) = delete;
  GpuQpSlot& operator=(const GpuQpSlot&) = delete;

  // `device_name` names the NIC in the telemetry document; one device per name.
  void open(nic::Nic& nic, const std::string& device_name, int cuda_device, int channel,
            uint32_t qp_number, uint32_t sq_wqebbs);

  telemetry::QpCounters* counters() const { return block_; }
  uint64_t* post_stamps() const { return stamps_; }
  uint64_t sample_mask() const { return sample_mask_; }

 private:
  nic::Nic* nic_ = nullptr;
  nic::Observer* observer_ = nullptr;
  telemetry::QpCounters* block_ = nullptr;  // GPU memory
  uint64_t* stamps_ = nullptr;   // GPU memory, right after the block
  uint64_t sample_mask_ = 0;
  uint64_t ticket_ = 0;
};

}  // namespace dissect::softnic
