#include "document.h"

#include <algorithm>
#include <limits>

#include "dissect/telemetry/json_writer.h"

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

void extreme(JsonWriter& json, const char* name, uint64_t value, bool any) {
  json.key(name);
  if (any) json.value(value); else json.null();
}

void write_doorbell_stats(JsonWriter& json, uint64_t doorbells, uint64_t wqes, uint64_t min,
                          uint64_t max) {
  json.field("num_doorbells", doorbells);
  json.key("wqes_per_doorbell").begin_object();
  json.field("total", wqes);
  extreme(json, "min", min, doorbells > 0);
  extreme(json, "max", max, doorbells > 0);
  json.end_object();
}

// Counters shared by the channel and the QP objects, in the page's order.
void write_wqe_counters(JsonWriter& json, const Config& config, uint64_t sent, uint64_t recv,
                        uint64_t rcvd, uint64_t completed, uint64_t sampled_count) {
  json.field("num_wqe_sent", sent);
  json.field("num_recv_wqe", recv);
  json.field("num_wqe_rcvd", rcvd);
  json.field("num_wqe_completed", completed);
  // Only when N > 1: at N = 1 it would repeat num_wqe_completed, and the file stays byte for
  // byte what it is without sampling (the page's rule).
  if (config.latency_sample > 1) json.field("num_wqe_sampled", sampled_count);
}

void write_histogram(JsonWriter& json, const QpCounters& qp) {
  json.key("wqe_completion_histogram").begin_array();
  for (uint32_t b = 0; b < qp.histogram_buckets; ++b) {
    json.begin_object();
    json.field("latency_ns", uint64_t{b + 1} * qp.histogram_interval_ns);  // upper edge
    json.field("num_wqe", qp.wqe_completion_histogram[b]);
    json.end_object();
  }
  json.end_array();
}

void write_qp(JsonWriter& json, const Config& config, const QpCounters& qp) {
  json.begin_object();
  json.field("id", qp.qp_number);
  write_wqe_counters(json, config, qp.num_wqe_sent, qp.num_recv_wqe, qp.num_wqe_rcvd,
                     qp.num_wqe_completed, sampled(qp));
  json.field("num_write_wqe", qp.num_write_wqe);
  json.field("num_write_imm_wqe", qp.num_write_imm_wqe);
  json.field("num_wqebb", qp.num_wqebb);
  json.field("tx_bytes", qp.tx_bytes);
  json.field("rx_bytes", qp.rx_bytes);
  json.field("num_cq_errors", qp.num_cq_errors);
  json.field("cq_poll_count", qp.cq_poll_count);
  write_doorbell_stats(json, qp.num_doorbells, qp.doorbell_wqes, qp.doorbell_wqes_min,
                       qp.doorbell_wqes_max);
  bool any_sample = qp.wqe_completion_ns_min != kNoneYet;
  extreme(json, "wqe_completion_ns_min", qp.wqe_completion_ns_min, any_sample);
  extreme(json, "wqe_completion_ns_max", qp.wqe_completion_ns_max, any_sample);
  write_histogram(json, qp);
  json.end_object();
}

void write_channel(JsonWriter& json, const Config& config, const ChannelSnapshot& channel) {
  Totals totals = channel_totals(channel);
  json.begin_object();
  json.field("id", channel.id);
  write_wqe_counters(json, config, totals.num_wqe_sent, totals.num_recv_wqe, totals.num_wqe_rcvd,
                     totals.num_wqe_completed, totals.num_wqe_sampled);
  json.field("num_write_wqe", totals.num_write_wqe);
  json.field("num_write_imm_wqe", totals.num_write_imm_wqe);
  json.field("num_req_completed", channel.counters.num_req_completed);
  write_doorbell_stats(json, totals.num_doorbells, totals.doorbell_wqes, totals.doorbell_wqes_min,
                       totals.doorbell_wqes_max);
  json.field("num_qps", static_cast<uint64_t>(channel.queue_pairs.size()));
  json.field("num_qp_untracked", channel.num_qp_untracked);
  json.key("queue_pairs").begin_array();
  for (const auto& qp : channel.queue_pairs) write_qp(json, config, qp);
  json.end_array();
  json.end_object();
}

void write_size_stats(JsonWriter& json, const Totals& totals) {
  json.key("wqe_size_stats").begin_array();
  for (uint32_t b = 0; b < kWqeSizeBuckets; ++b) {
    if (totals.wqe_size_histogram[b] == 0) continue;  // only non-empty buckets (the page)
    json.begin_object();
    json.field("max_wqe_size", uint64_t{1} << b);
    json.field("num_wqe", totals.wqe_size_histogram[b]);
    json.end_object();
  }
  json.end_array();
}

void write_counter_values(JsonWriter& json, const HwCounterValues& values) {
  json.begin_object();
  for (const auto& counter : values) json.field(counter.name, counter.value);
  json.end_object();
}

void write_device(JsonWriter& json, const Config& config, const DeviceSnapshot& device,
                  const HwCounterValues& hardware) {
  Totals totals = device_totals(device);
  uint64_t active = 0;
  for (const auto& channel : device.channels) active += channel_totals(channel).carried_traffic();
  json.begin_object();
  json.field("device_id", device.device_id);
  json.field("roce_device", device.info.roce_device);
  json.field("eth_device", device.info.eth_device);
  json.field("hw_type", device.info.hw_type);
  json.field("port", device.info.port);
  json.field("tx_bytes", totals.tx_bytes);
  json.field("rx_bytes", totals.rx_bytes);
  json.field("num_cq_errors", totals.num_cq_errors);
  json.field("cq_poll_count", totals.cq_poll_count);
  json.field("num_channels", static_cast<uint64_t>(device.channels.size()));
  json.field("active_channels", active);
  json.field("num_qp_untracked", device.num_qp_untracked);
  json.field("num_wqebb", totals.num_wqebb);
  write_doorbell_stats(json, totals.num_doorbells, totals.doorbell_wqes, totals.doorbell_wqes_min,
                       totals.doorbell_wqes_max);
  write_size_stats(json, totals);
  json.key("channels").begin_array();
  for (const auto& channel : device.channels) write_channel(json, config, channel);
  json.end_array();
  json.key("hw_counters");
  write_counter_values(json, hardware);
  json.end_object();
}

void write_samples(JsonWriter& json, const std::vector<HwSample>& samples) {
  json.key("hw_samples").begin_array();
  for (const auto& sample : samples) {
    json.begin_object();
    json.field("time_ns", sample.time_ns);
    json.field("device_id", sample.device_id);
    json.field("tx_bytes", sample.tx_bytes);
    json.field("rx_bytes", sample.rx_bytes);
    json.key("counters");
    write_counter_values(json, sample.counters);
    json.end_object();
  }
  json.end_array();
}

}  // namespace

uint64_t total_tx_bytes(const DeviceSnapshot& device) { return device_totals(device).tx_bytes; }
uint64_t total_rx_bytes(const DeviceSnapshot& device) { return device_totals(device).rx_bytes; }

std::string build_document(const Config& config, const DocumentHeader& header,
                           const std::vector<DeviceSnapshot>& devices,
                           const std::vector<HwCounterValues>& hardware,
                           const std::vector<HwSample>& samples) {
  JsonWriter json;
  json.begin_object();
  json.field("version", kSchemaVersion);
  json.field("host_name", header.host_name);
  json.field("process_name", header.process_name);
  json.field("process_id", static_cast<int64_t>(header.process_id));
  json.field("user_id", header.user_id);
  json.field("start_time", header.start_time);
  json.field("end_time", header.end_time);
  json.field("transport", config.transport);
  if (config.latency_sample > 1) json.field("latency_sample_interval", config.latency_sample);
  json.field("histogram_buckets", config.histogram_buckets);
  json.field("histogram_interval_ns", config.histogram_interval_ns);
  json.field("num_devices_untracked", header.num_devices_refused);
  json.field("num_qp_untracked_without_device", header.num_qp_untracked_without_device);
  json.key("devices").begin_array();
  for (size_t d = 0; d < devices.size(); ++d) {
    // A rank registers every NIC it can open but drives one or two; unused ones are left out.
    if (!devices[d].used) continue;
    write_device(json, config, devices[d], d < hardware.size() ? hardware[d] : HwCounterValues{});
  }
  json.end_array();
  if (config.sample_ms > 0) write_samples(json, samples);
  json.end_object();
  return json.text();
}

}  // namespace dissect::telemetry
