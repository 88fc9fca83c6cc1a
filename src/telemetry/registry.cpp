#include "dissect/telemetry/registry.h"

#include "report.h"

namespace dissect::telemetry {

struct Registry::Channel {
  uint32_t id = 0;
  ChannelCounters counters{};
  std::unique_ptr<QpCounters[]> slots;  // capacity max_qps_per_channel, allocated with the channel
  uint32_t num_qps = 0;
  uint64_t num_qp_untracked = 0;
};

struct Registry::Device {
  DeviceInfo info;
  std::vector<std::unique_ptr<Channel>> channels;
  uint64_t num_qp_untracked = 0;
  bool used = false;
};

Registry::Registry(HistogramShape shape, RegistryLimits limits) : shape_(shape), limits_(limits) {
  devices_.reserve(limits_.max_devices);
}

Registry::~Registry() = default;

int Registry::register_device(const DeviceInfo& info) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (devices_.size() >= limits_.max_devices) {
    ++devices_refused_;
    report("device " + info.roce_device + " gets no telemetry slot: all " +
           std::to_string(limits_.max_devices) + " device slots are taken");
    return -1;
  }
  auto device = std::make_unique<Device>();
  device->info = info;
  devices_.push_back(std::move(device));
  return static_cast<int>(devices_.size() - 1);
}

Registry::Channel* Registry::find_or_add_channel(Device& device, uint32_t channel_id) {
  for (auto& channel : device.channels) {
    if (channel->id == channel_id) return channel.get();
  }
  if (device.channels.size() >= limits_.max_channels_per_device) return nullptr;
  auto channel = std::make_unique<Channel>();
  channel->id = channel_id;
  channel->slots.reset(new QpCounters[limits_.max_qps_per_channel]);
  device.channels.push_back(std::move(channel));
  return device.channels.back().get();
}

QpTelemetry Registry::track_qp(int device_id, uint32_t channel_id, uint32_t qp_number,
                               bool* first_use) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (first_use != nullptr) *first_use = false;
  if (device_id < 0 || static_cast<size_t>(device_id) >= devices_.size()) {
    ++untracked_without_device_;
    return {};
  }
  Device& device = *devices_[device_id];
  if (first_use != nullptr) *first_use = !device.used;
  device.used = true;
  Channel* channel = find_or_add_channel(device, channel_id);
  if (channel == nullptr || channel->num_qps >= limits_.max_qps_per_channel) {
    ++device.num_qp_untracked;
    if (channel != nullptr) ++channel->num_qp_untracked;
    return {};
  }
  QpCounters& slot = channel->slots[channel->num_qps++];
  initialise_counters(slot, qp_number, shape_);
  return {&slot, &channel->counters};
}

uint64_t Registry::num_qp_untracked_without_device() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return untracked_without_device_;
}

uint64_t Registry::num_devices_refused() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return devices_refused_;
}

std::vector<DeviceSnapshot> Registry::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<DeviceSnapshot> devices;
  for (size_t d = 0; d < devices_.size(); ++d) {
    const Device& device = *devices_[d];
    DeviceSnapshot copy;
    copy.device_id = static_cast<int>(d);
    copy.info = device.info;
    copy.num_qp_untracked = device.num_qp_untracked;
    copy.used = device.used;
    for (const auto& channel : device.channels) {
      ChannelSnapshot channel_copy;
      channel_copy.id = channel->id;
      channel_copy.counters = telemetry::snapshot(channel->counters);
      channel_copy.num_qp_untracked = channel->num_qp_untracked;
      for (uint32_t q = 0; q < channel->num_qps; ++q)
        channel_copy.queue_pairs.push_back(telemetry::snapshot(channel->slots[q]));
      copy.channels.push_back(std::move(channel_copy));
    }
    devices.push_back(std::move(copy));
  }
  return devices;
}

}  // namespace dissect::telemetry
