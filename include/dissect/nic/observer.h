// What watches the NICs: the NIC providers' one way up. A provider tells the process's observer
// that a NIC opened and that a QP was created, and keeps the counter slot it hands back; telemetry
// (DESIGN.md layer 7) is the observer and installs itself from above, so no provider includes it.
//
// Contract
// - Who installs: a layer above, once, at static initialisation (set_observer_source); telemetry's
//   process session does (src/telemetry/process.cpp). The source is called once, at the first
//   observer() call, i.e. when the first NIC opens: a program that sets DISSECT_TELEMETRY_* in
//   main() before opening a NIC is observed as configured.
// - Who calls: the providers, from their control path (NIC open, QP creation and destruction);
//   never the data path, which only follows the slot pointers.
// - None installed: observer() is null, every QP has no slot and the hooks are no-ops. When
//   DISSECT_TELEMETRY_ENABLE=1 asks for telemetry that is not linked into the program, the first
//   call says so on stderr (one line), so the missing file is never a silent fallback.
// - Threads: observer() is thread-safe; the observer's member functions are (telemetry's are).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "dissect/nic/hw_counters.h"
#include "dissect/nic/qp_counters.h"

namespace dissect::nic {

// A NIC as the observer names it.
struct DeviceDescription {
  std::string roce_device;  // IB device name: "mlx5_0", or the softnic's name
  std::string eth_device;   // netdev for ethtool counters; empty when there is none
  std::string hw_type;      // "mlx5", "softnic", "ibverbs", ...
  uint32_t port = 1;
};

class Observer {
 public:
  virtual ~Observer() = default;
  // A NIC opened; the observer keeps `hardware` (its counters). Returns its device id, or -1 when
  // it is not observed.
  virtual int open_device(const DeviceDescription& device,
                          std::unique_ptr<telemetry::HwCounterSource> hardware) = 0;
  // The counter slot of QP `qp_number` on channel `channel` of device `device`, or null. A slot
  // comes configured (histogram shape, latency sample mask: telemetry's Registry::track_qp); the
  // data path's hooks trust its shape.
  virtual telemetry::QpCounters* track_qp(int device, uint32_t channel, uint32_t qp_number) = 0;
  // A provider whose kernels count into a GPU copy of a slot (telemetry::fresh_copy) registers how
  // to copy it back: `gather` copies it and calls merge_device_block; it runs once, when the
  // observer finalises or at gather_device_block(ticket), and must not throw. Returns the ticket.
  virtual uint64_t add_device_block(std::function<void()> gather) = 0;
  virtual void gather_device_block(uint64_t ticket) = 0;
  // Folds a block copied back from the GPU into its host slot; false (reported) on a mismatch.
  virtual bool merge_device_block(telemetry::QpCounters* slot,
                                  const telemetry::QpCounters& device_copy) = 0;
};

using ObserverSource = Observer* (*)();
// Installs the source of the process's observer; a later call replaces an earlier one.
void set_observer_source(ObserverSource source);
// The process's observer, or null (none installed, or it declined: telemetry off).
Observer* observer();

}  // namespace dissect::nic
