#include "document.h"

#include <algorithm>
#include <limits>

#include "dissect/telemetry/json.h"

namespace dissect::telemetry {
namespace {

constexpr uint64_t kNoneYet = std::numeric_limits<uint64_t>::max();

// The per-QP counters summed into a channel or a device. Channel totals are computed here, at
// write time, from the QP slots and never stored: storing them would make every QP of a channel
// contend for one cache line (the page measured up to 11%).
struct Totals {
  uint64_t num_wqe_sent = 0, num_recv_wqe = 0, num_wqe_rcvd = 0, num_wqe_completed = 0;
  uint64_t num_wqe_sampled = 0, num_write_wqe = 0, num_write_imm_wqe = 0, num_wqebb = 0;
  uint64_t tx_bytes = 0, rx_bytes = 0, num_cq_errors = 0, cq_poll_count = 0;
  uint64_t num_doorbells = 0, doorbell_wqes = 0, doorbell_wqes_min = kNoneYet, doorbell_wqes_max = 0;
  uint64_t wqe_size_histogram[kWqeSizeBuckets] = {};

  bool carried_traffic() const { return num_wqe_sent + num_recv_wqe + num_wqe_rcvd > 0; }
};

uint64_t sampled(const QpCounters& qp) {
  uint64_t sum = 0;
  for (uint32_t b = 0; b < qp.histogram_buckets; ++b) sum += qp.wqe_completion_histogram[b];
  return sum;
}

void add(Totals& totals, const QpCounters& qp) {
  totals.num_wqe_sent += qp.num_wqe_sent;
  totals.num_recv_wqe += qp.num_recv_wqe;
  totals.num_wqe_rcvd += qp.num_wqe_rcvd;
  totals.num_wqe_completed += qp.num_wqe_completed;
  totals.num_wqe_sampled += sampled(qp);
  totals.num_write_wqe += qp.num_write_wqe;
  totals.num_write_imm_wqe += qp.num_write_imm_wqe;
  totals.num_wqebb += qp.num_wqebb;
  totals.tx_bytes += qp.tx_bytes;
  totals.rx_bytes += qp.rx_bytes;
  totals.num_cq_errors += qp.num_cq_errors;
  totals.cq_poll_count += qp.cq_poll_count;
  totals.num_doorbells += qp.num_doorbells;
  totals.doorbell_wqes += qp.doorbell_wqes;
  totals.doorbell_wqes_min = std::min(totals.doorbell_wqes_min, qp.doorbell_wqes_min);
  totals.doorbell_wqes_max = std::max(totals.doorbell_wqes_max, qp.doorbell_wqes_max);
  for (uint32_t b = 0; b < kWqeSizeBuckets; ++b) totals.wqe_size_histogram[b] += qp.wqe_size_histogram[b];
}

Totals channel_totals(const ChannelSnapshot& channel) {
  Totals totals;
  for (const auto& qp : channel.queue_pairs) add(totals, qp);
  return totals;
}

Totals device_totals(const DeviceSnapshot& device) {
  Totals totals;
  for (const auto& channel : device.channels)
    for (const auto& qp : channel.queue_pairs) add(totals, qp);
  return totals;
}

// null until a value was recorded (the page writes no sentinel).
Json extreme(uint64_t value, bool any) { return any ? Json(value) : Json(nullptr); }

Json doorbell_stats(uint64_t doorbells, uint64_t wqes, uint64_t min, uint64_t max) {
  return Json{{"total", wqes}, {"min", extreme(min, doorbells > 0)}, {"max", extreme(max, doorbells > 0)}};
}

// Counters shared by the channel and the QP objects, in the page's order.
void add_wqe_counters(Json& json, const Config& config, uint64_t sent, uint64_t recv, uint64_t rcvd,
                      uint64_t completed, uint64_t sampled_count) {
  json["num_wqe_sent"] = sent;
  json["num_recv_wqe"] = recv;
  json["num_wqe_rcvd"] = rcvd;
  json["num_wqe_completed"] = completed;
  // Only when N > 1: at N = 1 it would repeat num_wqe_completed, and the file stays byte for
  // byte what it is without sampling (the page's rule).
  if (config.latency_sample > 1) json["num_wqe_sampled"] = sampled_count;
}

Json histogram(const QpCounters& qp) {
  Json buckets = Json::array();
  for (uint32_t b = 0; b < qp.histogram_buckets; ++b) {
    buckets.push_back({{"latency_ns", uint64_t{b + 1} * qp.histogram_interval_ns},  // upper edge
                       {"num_wqe", qp.wqe_completion_histogram[b]}});
  }
  return buckets;
}

Json qp_object(const Config& config, const QpCounters& qp) {
  Json json = {{"id", qp.qp_number}};
  add_wqe_counters(json, config, qp.num_wqe_sent, qp.num_recv_wqe, qp.num_wqe_rcvd,
                   qp.num_wqe_completed, sampled(qp));
  json["num_write_wqe"] = qp.num_write_wqe;
  json["num_write_imm_wqe"] = qp.num_write_imm_wqe;
  json["num_wqebb"] = qp.num_wqebb;
  json["tx_bytes"] = qp.tx_bytes;
  json["rx_bytes"] = qp.rx_bytes;
  json["num_cq_errors"] = qp.num_cq_errors;
  json["cq_poll_count"] = qp.cq_poll_count;
  json["num_doorbells"] = qp.num_doorbells;
  json["wqes_per_doorbell"] = doorbell_stats(qp.num_doorbells, qp.doorbell_wqes,
                                             qp.doorbell_wqes_min, qp.doorbell_wqes_max);
  const bool any_sample = qp.wqe_completion_ns_min != kNoneYet;
  json["wqe_completion_ns_min"] = extreme(qp.wqe_completion_ns_min, any_sample);
  json["wqe_completion_ns_max"] = extreme(qp.wqe_completion_ns_max, any_sample);
  json["wqe_completion_histogram"] = histogram(qp);
  return json;
}

Json channel_object(const Config& config, const ChannelSnapshot& channel) {
  const Totals totals = channel_totals(channel);
  Json json = {{"id", channel.id}};
  add_wqe_counters(json, config, totals.num_wqe_sent, totals.num_recv_wqe, totals.num_wqe_rcvd,
                   totals.num_wqe_completed, totals.num_wqe_sampled);
  json["num_write_wqe"] = totals.num_write_wqe;
  json["num_write_imm_wqe"] = totals.num_write_imm_wqe;
  json["num_req_completed"] = channel.counters.num_req_completed;
  json["num_doorbells"] = totals.num_doorbells;
  json["wqes_per_doorbell"] = doorbell_stats(totals.num_doorbells, totals.doorbell_wqes,
                                             totals.doorbell_wqes_min, totals.doorbell_wqes_max);
  json["num_qps"] = static_cast<uint64_t>(channel.queue_pairs.size());
  json["num_qp_untracked"] = channel.num_qp_untracked;
  json["queue_pairs"] = Json::array();
  for (const auto& qp : channel.queue_pairs) json["queue_pairs"].push_back(qp_object(config, qp));
  return json;
}

Json size_stats(const Totals& totals) {
  Json buckets = Json::array();
  for (uint32_t b = 0; b < kWqeSizeBuckets; ++b) {
    if (totals.wqe_size_histogram[b] == 0) continue;  // only non-empty buckets (the page)
    buckets.push_back({{"max_wqe_size", uint64_t{1} << b}, {"num_wqe", totals.wqe_size_histogram[b]}});
  }
  return buckets;
}

Json counter_values(const HwCounterValues& values) {
  Json json = Json::object();
  for (const auto& counter : values) json[counter.name] = counter.value;
  return json;
}

Json device_object(const Config& config, const DeviceSnapshot& device,
                   const HwCounterValues& hardware) {
  const Totals totals = device_totals(device);
  uint64_t active = 0;
  for (const auto& channel : device.channels) active += channel_totals(channel).carried_traffic();
  Json json = {{"device_id", device.device_id},
               {"roce_device", device.info.roce_device},
               {"eth_device", device.info.eth_device},
               {"hw_type", device.info.hw_type},
               {"port", device.info.port},
               {"tx_bytes", totals.tx_bytes},
               {"rx_bytes", totals.rx_bytes},
               {"num_cq_errors", totals.num_cq_errors},
               {"cq_poll_count", totals.cq_poll_count},
               {"num_channels", static_cast<uint64_t>(device.channels.size())},
               {"active_channels", active},
               {"num_qp_untracked", device.num_qp_untracked},
               {"num_wqebb", totals.num_wqebb},
               {"num_doorbells", totals.num_doorbells}};
  json["wqes_per_doorbell"] = doorbell_stats(totals.num_doorbells, totals.doorbell_wqes,
                                             totals.doorbell_wqes_min, totals.doorbell_wqes_max);
  json["wqe_size_stats"] = size_stats(totals);
  json["channels"] = Json::array();
  for (const auto& channel : device.channels) json["channels"].push_back(channel_object(config, channel));
  json["hw_counters"] = counter_values(hardware);
  return json;
}

Json samples_array(const std::vector<HwSample>& samples) {
  Json array = Json::array();
  for (const auto& sample : samples) {
    array.push_back({{"time_ns", sample.time_ns},
                     {"device_id", sample.device_id},
                     {"tx_bytes", sample.tx_bytes},
                     {"rx_bytes", sample.rx_bytes},
                     {"counters", counter_values(sample.counters)}});
  }
  return array;
}

}  // namespace

uint64_t total_tx_bytes(const DeviceSnapshot& device) { return device_totals(device).tx_bytes; }
uint64_t total_rx_bytes(const DeviceSnapshot& device) { return device_totals(device).rx_bytes; }

std::string build_document(const Config& config, const DocumentHeader& header,
                           const std::vector<DeviceSnapshot>& devices,
                           const std::vector<HwCounterValues>& hardware,
                           const std::vector<HwSample>& samples) {
  Json json = {{"version", kSchemaVersion},
               {"host_name", header.host_name},
               {"process_name", header.process_name},
               {"process_id", static_cast<int64_t>(header.process_id)},
               {"user_id", header.user_id},
               {"start_time", header.start_time},
               {"end_time", header.end_time},
               {"transport", config.transport}};
  if (config.latency_sample > 1) json["latency_sample_interval"] = config.latency_sample;
  json["histogram_buckets"] = config.histogram_buckets;
  json["histogram_interval_ns"] = config.histogram_interval_ns;
  json["num_devices_untracked"] = header.num_devices_refused;
  json["num_qp_untracked_without_device"] = header.num_qp_untracked_without_device;
  json["devices"] = Json::array();
  for (size_t d = 0; d < devices.size(); ++d) {
    // A rank registers every NIC it can open but drives one or two; unused ones are left out.
    if (!devices[d].used) continue;
    json["devices"].push_back(
        device_object(config, devices[d], d < hardware.size() ? hardware[d] : HwCounterValues{}));
  }
  if (config.sample_ms > 0) json["hw_samples"] = samples_array(samples);
  return dump_document(json);
}

}  // namespace dissect::telemetry
