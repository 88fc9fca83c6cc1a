// Private: the softnic's own counters under telemetry's canonical hardware-counter names, where
// they mean what the ConnectX counter means (bytes and packets on the port, requester error CQEs).
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "dissect/softnic/softnic.h"
#include "dissect/nic/hw_counters.h"

namespace dissect::softnic {

// Telemetry owns the source and reads it until the process exits, which may be after the SoftNic
// is gone: the SoftNic detaches it on destruction, leaving its final totals behind.
class ModelCounterSource : public telemetry::HwCounterSource {
 public:
  explicit ModelCounterSource(const SoftNic& nic) : nic_(&nic) {}
  std::vector<std::string> names() const override;
  telemetry::HwCounterValues read(const std::vector<std::string>& names) override;
  void detach(const ModelCounters& final_totals);

 private:
  std::mutex lock_;
  const SoftNic* nic_;  // null once detached
  ModelCounters final_totals_{};
};

}  // namespace dissect::softnic
