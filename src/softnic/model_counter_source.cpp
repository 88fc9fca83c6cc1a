#include "model_counter_source.h"

namespace dissect::softnic {
namespace {

int64_t model_value(const ModelCounters& c, const std::string& name) {
  if (name == "port_xmit_bytes") return static_cast<int64_t>(c.tx_bytes);
  if (name == "port_rcv_bytes") return static_cast<int64_t>(c.rx_bytes);
  if (name == "port_xmit_packets") return static_cast<int64_t>(c.tx_packets);
  if (name == "port_rcv_packets") return static_cast<int64_t>(c.rx_packets);
  if (name == "req_cqe_error") return static_cast<int64_t>(c.error_cqes);
  return telemetry::kUnreadable;
}

}  // namespace

std::vector<std::string> ModelCounterSource::names() const {
  return {"port_xmit_bytes", "port_rcv_bytes", "port_xmit_packets", "port_rcv_packets",
          "req_cqe_error"};
}

void ModelCounterSource::detach(const ModelCounters& final_totals) {
  std::lock_guard<std::mutex> guard(lock_);
  final_totals_ = final_totals;
  nic_ = nullptr;
}

telemetry::HwCounterValues ModelCounterSource::read(const std::vector<std::string>& names) {
  std::lock_guard<std::mutex> guard(lock_);
  const ModelCounters totals = nic_ != nullptr ? nic_->port_counters() : final_totals_;
  telemetry::HwCounterValues values;
  for (const auto& name : names) values.push_back({name, model_value(totals, name)});
  return values;
}

}  // namespace dissect::softnic
