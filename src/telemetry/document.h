// Builds the per-rank JSON document (schema: docs/telemetry.schema.json).
#pragma once

#include <string>
#include <vector>

#include "dissect/telemetry/config.h"
#include "dissect/nic/hw_counters.h"
#include "dissect/telemetry/registry.h"
#include "dissect/telemetry/session.h"

namespace dissect::telemetry {

struct DocumentHeader {
  std::string host_name;
  std::string process_name;
  long process_id;
  unsigned user_id;
  std::string start_time;
  std::string end_time;
  uint64_t num_qp_untracked_without_device;
  uint64_t num_devices_refused;
};

// `hardware[i]` are the deltas of devices[i]; `samples` is emitted only when sampling is on.
std::string build_document(const Config& config, const DocumentHeader& header,
                           const std::vector<DeviceSnapshot>& devices,
                           const std::vector<HwCounterValues>& hardware,
                           const std::vector<HwSample>& samples);

// Sums over a device's tracked QPs (also what the sampler records).
uint64_t total_tx_bytes(const DeviceSnapshot& device);
uint64_t total_rx_bytes(const DeviceSnapshot& device);

}  // namespace dissect::telemetry
