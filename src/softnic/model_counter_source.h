// Private: the softnic's own counters under telemetry's canonical hardware-counter names, where
// they mean what the ConnectX counter means (bytes and packets on the port, requester error CQEs).
#pragma once

#include <string>
#include <vector>

#include "dissect/softnic/softnic.h"
#include "dissect/telemetry/hw_counters.h"

namespace dissect::softnic {

class ModelCounterSource : public telemetry::HwCounterSource {
 public:
  explicit ModelCounterSource(const SoftNic& nic) : nic_(nic) {}
  std::vector<std::string> names() const override;
  telemetry::HwCounterValues read(const std::vector<std::string>& names) override;

 private:
  const SoftNic& nic_;
};

}  // namespace dissect::softnic
