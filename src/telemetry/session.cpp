#include "dissect/telemetry/session.h"

#include <unistd.h>

#include <ctime>
#include <fstream>

#include "document.h"
#include "dissect/common/clock.h"
#include "dissect/common/output_file.h"
#include "report.h"

namespace dissect::telemetry {
namespace {

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

std::string process_name() {
  std::ifstream comm("/proc/self/comm");
  std::string name;
  if (!std::getline(comm, name)) return "unknown";
  return name;
}

// UTC, ISO 8601 with microseconds: "2025-01-31T12:34:56.123456Z".
std::string wall_clock_now() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  tm utc{};
  gmtime_r(&now.tv_sec, &utc);
  char text[64];
  size_t length = std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(text + length, sizeof(text) - length, ".%06ldZ", now.tv_nsec / 1000);
  return text;
}

// A gather that throws anyway loses only its own block.
void run_gather(const std::function<void()>& gather) {
  try {
    gather();
  } catch (const std::exception& error) {
    report(std::string("a GPU counter block was not gathered: ") + error.what());
  }
}

}  // namespace

Session::Session(Config config, SessionOptions options)
    : config_(std::move(config)),
      options_(options),
      registry_(config_.histogram(), options_.limits),
      host_name_(host_name()),
      process_name_(process_name()),
      start_time_(wall_clock_now()) {}

Session::~Session() { stop_sampler(); }

void Session::start() {
  if (config_.sample_ms == 0 || sampler_) return;
  try {
    sampler_ = std::make_unique<PeriodicThread>(std::chrono::milliseconds(config_.sample_ms),
                                                [this] { return sample_tick(); });
  } catch (const std::exception& error) {
    report(std::string("the sampler thread did not start (") + error.what() + "); no hw_samples");
  }
}

void Session::stop_sampler() {
  if (sampler_) sampler_->stop();
}

int Session::register_device(const DeviceInfo& info, std::unique_ptr<HwCounterSource> hardware) {
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    int device_id = registry_.register_device(info);
    if (device_id < 0) return -1;
    trackers_.resize(static_cast<size_t>(device_id) + 1);
    trackers_[device_id] = std::make_unique<HwCounterTracker>(std::move(hardware), config_.hw_counters);
    if (config_.debug) {
      report("registered device " + std::to_string(device_id) + ": " + info.roce_device + " (" +
             info.hw_type + ", netdev '" + info.eth_device + "', port " + std::to_string(info.port) + ")");
    }
    return device_id;
  } catch (const std::exception& error) {
    report("device " + info.roce_device + " not registered: " + error.what());
    return -1;
  }
}

QpTelemetry Session::track_qp(int device_id, uint32_t channel_id, uint32_t qp_number) {
  try {
    bool first_use = false;
    QpTelemetry slot = registry_.track_qp(device_id, channel_id, qp_number, &first_use);
    if (slot.counters == nullptr) {
      report("QP " + std::to_string(qp_number) + " on device " + std::to_string(device_id) +
             " channel " + std::to_string(channel_id) + " gets no telemetry slot; counted in num_qp_untracked");
    }
    if (first_use) {
      // The baseline precedes any traffic on the device: its first QP is not connected yet.
      HwCounterTracker* tracker = nullptr;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        tracker = trackers_[device_id].get();
      }
      tracker->take_baseline();
    }
    return slot;
  } catch (const std::exception& error) {
    report("QP " + std::to_string(qp_number) + " untracked: " + error.what());
    return {};
  }
}

bool Session::merge_device_block(QpCounters* slot, const QpCounters& device_copy) {
  if (slot == nullptr) return false;
  if (merge_from(*slot, device_copy)) return true;
  report("GPU counter block of QP " + std::to_string(device_copy.qp_number) +
         " has a different layout or histogram shape than its slot; not merged");
  return false;
}

uint64_t Session::add_device_block(std::function<void()> gather) {
  std::lock_guard<std::mutex> lock(gather_mutex_);
  const uint64_t ticket = next_device_block_++;
  device_blocks_.emplace(ticket, std::move(gather));
  return ticket;
}

void Session::gather_device_block(uint64_t ticket) {
  std::lock_guard<std::mutex> lock(gather_mutex_);
  auto found = device_blocks_.find(ticket);
  if (found == device_blocks_.end()) return;
  std::function<void()> gather = std::move(found->second);
  device_blocks_.erase(found);
  run_gather(gather);
}

void Session::gather_device_blocks() {
  std::lock_guard<std::mutex> lock(gather_mutex_);
  for (auto& [ticket, gather] : device_blocks_) run_gather(gather);
  device_blocks_.clear();
}

std::string Session::output_file_name() const {
  return "dissect_telemetry_" + host_name_ + "_" + std::to_string(::getuid()) + "_" +
         std::to_string(::getpid()) + ".json";
}

std::string Session::output_path() const { return config_.output_dir + "/" + output_file_name(); }

size_t Session::num_samples() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return samples_.size();
}

bool Session::sample_tick() {
  std::vector<DeviceSnapshot> devices = registry_.snapshot();
  uint64_t now = now_ns();
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& device : devices) {
    HwCounterTracker* tracker = trackers_[device.device_id].get();
    if (!device.used || tracker == nullptr || !tracker->has_baseline()) continue;
    if (samples_.size() >= options_.max_samples) {
      report("hw_samples is full (" + std::to_string(options_.max_samples) + " samples); the sampler stops");
      return false;
    }
    samples_.push_back({now, device.device_id, total_tx_bytes(device), total_rx_bytes(device),
                        tracker->sample(congestion_counter_names())});
  }
  return true;
}

std::string Session::document() {
  std::vector<DeviceSnapshot> devices = registry_.snapshot();
  std::vector<HwCounterValues> hardware(devices.size());
  std::vector<HwSample> samples;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& device : devices) {
      HwCounterTracker* tracker = trackers_[device.device_id].get();
      if (device.used && tracker != nullptr) hardware[device.device_id] = tracker->deltas();
    }
    samples = samples_;
  }
  DocumentHeader header{host_name_,
                        process_name_,
                        static_cast<long>(::getpid()),
                        static_cast<unsigned>(::getuid()),
                        start_time_,
                        wall_clock_now(),
                        registry_.num_qp_untracked_without_device(),
                        registry_.num_devices_refused()};
  return build_document(config_, header, devices, hardware, samples);
}

bool Session::finalize() {
  std::lock_guard<std::mutex> lock(finalize_mutex_);
  if (finalized_) return written_;
  finalized_ = true;
  stop_sampler();
  gather_device_blocks();
  std::string path = output_path();
  try {
    WriteOutcome outcome = write_file_no_follow(config_.output_dir, output_file_name(), document());
    written_ = outcome.written;
    if (!outcome.written) {
      report("cannot write " + path + ": " + outcome.reason + "; this rank's telemetry is dropped");
    } else if (config_.debug) {
      report("wrote " + path);
    }
  } catch (const std::exception& error) {
    report("cannot write " + path + ": " + error.what() + "; this rank's telemetry is dropped");
  }
  return written_;
}

}  // namespace dissect::telemetry
