// Device -> channel -> QP slot tables.
//
// Contract
// - Who calls: transports, at setup. register_device() when a NIC (real or softnic) is opened;
//   track_qp() once per QP at creation, keeping the returned pointers next to the QP for the
//   lifetime of the process. The writer and the sampler read the tables through snapshot().
// - Threads: every member function is thread-safe (one mutex, never taken on the data path).
// - Memory: slots are allocated on first use and never freed or moved while the Registry lives,
//   so a pointer handed out at QP creation stays valid; hooks write through it without a lock.
// - Capacity is fixed (RegistryLimits). A QP that gets no slot is counted in num_qp_untracked
//   (on its channel when the channel exists, and on its device) and gets null pointers, which make
//   every hook a no-op. It is never dropped silently.
// - Channel: the unit of work that drives a set of QPs. mini-proxy: one CPU worker and its rings;
//   mini-gda: the QPs driven by one CTA; softnic: the engine's own id (docs/telemetry.md).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "dissect/nic/observer.h"
#include "dissect/nic/qp_counters.h"

namespace dissect::telemetry {

struct RegistryLimits {
  uint32_t max_devices = 32;
  uint32_t max_channels_per_device = 64;
  uint32_t max_qps_per_channel = 64;
};

// A device as the NICs' observer is told of it (nic/observer.h).
using DeviceInfo = nic::DeviceDescription;

// What a transport keeps next to its QP. Both pointers are null when the QP is untracked.
struct QpTelemetry {
  QpCounters* counters = nullptr;
  ChannelCounters* channel = nullptr;
};
static_assert(std::is_trivially_copyable_v<QpTelemetry>);

// Copies of the tables for the writer and the sampler (counters read with relaxed loads).
struct ChannelSnapshot {
  uint32_t id = 0;
  ChannelCounters counters{};
  uint64_t num_qp_untracked = 0;
  std::vector<QpCounters> queue_pairs;
};
struct DeviceSnapshot {
  int device_id = -1;
  DeviceInfo info;
  uint64_t num_qp_untracked = 0;
  bool used = false;  // some QP was requested on it (tracked or not)
  std::vector<ChannelSnapshot> channels;
};

class Registry {
 public:
  Registry(HistogramShape shape, RegistryLimits limits);
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Returns the device id (its slot index), or -1 when the table is full.
  int register_device(const DeviceInfo& info);

  // Returns the QP's slot, or null pointers when no slot is left (then counted as untracked).
  // `first_use` is set when this is the first QP requested on the device.
  QpTelemetry track_qp(int device_id, uint32_t channel_id, uint32_t qp_number, bool* first_use);

  // QPs requested on a device id that was never registered (e.g. its registration was refused).
  uint64_t num_qp_untracked_without_device() const;
  uint64_t num_devices_refused() const;

  std::vector<DeviceSnapshot> snapshot() const;

 private:
  struct Channel;
  struct Device;
  Channel* find_or_add_channel(Device& device, uint32_t channel_id);

  HistogramShape shape_;
  RegistryLimits limits_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Device>> devices_;
  uint64_t untracked_without_device_ = 0;
  uint64_t devices_refused_ = 0;
};

}  // namespace dissect::telemetry
