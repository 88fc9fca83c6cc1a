#include "dissect/telemetry/hw_counters.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>

namespace dissect::telemetry {
namespace {

CanonicalCounter hw(const char* name, const char* key) {
  return {name, {{CounterOrigin::ib_port_hw_counters, key, 1}}};
}
CanonicalCounter port(const char* name, const char* key, uint64_t scale = 1) {
  return {name, {{CounterOrigin::ib_port_counters, key, scale}}};
}
CanonicalCounter eth(const char* name, const char* key, const char* fallback = nullptr) {
  CanonicalCounter counter{name, {{CounterOrigin::ethtool, key, 1}}};
  if (fallback != nullptr) counter.keys.push_back({CounterOrigin::ethtool, fallback, 1});
  return counter;
}

std::vector<CanonicalCounter> build_mlx5_table() {
  std::vector<CanonicalCounter> table = {
      // Congestion and retransmission (bench.md §3.4; names as RCCL's mlx5 table).
      hw("ecn_marked_pkts", "np_ecn_marked_roce_packets"), hw("cnp_sent", "np_cnp_sent"),
      hw("cnp_handled", "rp_cnp_handled"), hw("cnp_ignored", "rp_cnp_ignored"),
      hw("out_of_buffer", "out_of_buffer"), hw("oos_drop_count", "out_of_sequence"),
      hw("seq_err_naks_rcvd", "packet_seq_err"), hw("implied_nak_seq_err", "implied_nak_seq_err"),
      hw("local_ack_timeout_err", "local_ack_timeout_err"), hw("rnr_retry_err", "rnr_nak_retry_err"),
      hw("duplicate_request", "duplicate_request"),
      hw("max_retry_exceeded", "req_transport_retries_exceeded"),
      hw("roce_adp_retrans", "roce_adp_retrans"), hw("roce_adp_retrans_to", "roce_adp_retrans_to"),
      hw("roce_slow_restart", "roce_slow_restart"),
      hw("roce_slow_restart_cnps", "roce_slow_restart_cnps"),
      hw("roce_slow_restart_trans", "roce_slow_restart_trans"),
      // Error context.
      hw("req_cqe_error", "req_cqe_error"), hw("req_cqe_flush_error", "req_cqe_flush_error"),
      hw("resp_cqe_error", "resp_cqe_error"), hw("resp_cqe_flush_error", "resp_cqe_flush_error"),
      hw("req_remote_access_errors", "req_remote_access_errors"),
      hw("req_remote_invalid_request", "req_remote_invalid_request"),
      hw("resp_remote_access_errors", "resp_remote_access_errors"),
      hw("resp_local_length_error", "resp_local_length_error"),
      hw("req_rnr_retries_exceeded", "req_rnr_retries_exceeded"),
      hw("rx_icrc_encapsulated", "rx_icrc_encapsulated"),
      // Traffic context.
      hw("rx_write_requests", "rx_write_requests"), hw("rx_read_requests", "rx_read_requests"),
      hw("rx_atomic_requests", "rx_atomic_requests"),
      // IB port counters; port_{xmit,rcv}_data count 4-byte words (IB spec), reported in bytes.
      port("port_xmit_bytes", "port_xmit_data", 4), port("port_rcv_bytes", "port_rcv_data", 4),
      port("port_xmit_packets", "port_xmit_packets"), port("port_rcv_packets", "port_rcv_packets"),
      port("port_xmit_wait", "port_xmit_wait"), port("port_xmit_discards", "port_xmit_discards"),
      port("port_rcv_errors", "port_rcv_errors"), port("symbol_error", "symbol_error"),
      port("link_downed", "link_downed"), port("link_error_recovery", "link_error_recovery"),
      // ethtool: PFC back-pressure, buffer drops, RDMA bytes on the wire (RoCE bypasses the
      // netdev's own byte counters; the vport RDMA counters track the IB port counters).
      eth("pfc_rx_pause_frames", "rx_pause_ctrl_phy", "rx_pause"),
      eth("pfc_tx_pause_frames", "tx_pause_ctrl_phy", "tx_pause"),
      eth("rx_discards_phy", "rx_discards_phy"), eth("rx_out_of_buffer", "rx_out_of_buffer"),
      eth("delta_tx_bytes", "tx_vport_rdma_unicast_bytes"),
      eth("delta_rx_bytes", "rx_vport_rdma_unicast_bytes"),
      eth("delta_tx_packets", "tx_vport_rdma_unicast_packets"),
      eth("delta_rx_packets", "rx_vport_rdma_unicast_packets"),
  };
  const char* const per_priority[][2] = {{"pfc_rx_frames_prio", "rx_prio%u_pause"},
                                         {"pfc_tx_frames_prio", "tx_prio%u_pause"},
                                         {"pfc_rx_pause_us_prio", "rx_prio%u_pause_duration"},
                                         {"pfc_tx_pause_us_prio", "tx_prio%u_pause_duration"}};
  for (const auto& family : per_priority) {
    for (unsigned priority = 0; priority < 8; ++priority) {
      char key[64];
      std::snprintf(key, sizeof(key), family[1], priority);
      table.push_back(eth((family[0] + std::to_string(priority)).c_str(), key));
    }
  }
  return table;
}

const CanonicalCounter* find_counter(const std::string& name) {
  static const auto* index = [] {
    auto* map = new std::unordered_map<std::string, const CanonicalCounter*>();
    for (const auto& counter : mlx5_counter_table()) (*map)[counter.name] = &counter;
    return map;
  }();
  auto found = index->find(name);
  return found == index->end() ? nullptr : found->second;
}

bool needs_ethtool(const std::vector<std::string>& names) {
  return std::any_of(names.begin(), names.end(), [](const std::string& name) {
    const CanonicalCounter* counter = find_counter(name);
    if (counter == nullptr) return false;
    return std::any_of(counter->keys.begin(), counter->keys.end(),
                       [](const CounterKey& key) { return key.origin == CounterOrigin::ethtool; });
  });
}

}  // namespace

const std::vector<CanonicalCounter>& mlx5_counter_table() {
  static const std::vector<CanonicalCounter> table = build_mlx5_table();
  return table;
}

const std::vector<std::string>& congestion_counter_names() {
  static const std::vector<std::string> names = {
      "ecn_marked_pkts",   "cnp_sent",      "cnp_handled",           "out_of_buffer",
      "oos_drop_count",    "seq_err_naks_rcvd", "rnr_retry_err",     "local_ack_timeout_err"};
  return names;
}

int64_t read_counter_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return kUnreadable;
  char text[32];
  ssize_t length = ::read(fd, text, sizeof(text) - 1);  // a directory fails here with EISDIR
  ::close(fd);
  if (length <= 0) return kUnreadable;
  text[length] = '\0';
  if (text[0] < '0' || text[0] > '9') return kUnreadable;
  char* end = nullptr;
  errno = 0;
  unsigned long long value = std::strtoull(text, &end, 10);
  while (*end == '\n' || *end == ' ') ++end;
  // Values above INT64_MAX cannot be told apart from -1 in the output: treat them as unreadable.
  if (errno != 0 || *end != '\0' || value > static_cast<unsigned long long>(INT64_MAX))
    return kUnreadable;
  return static_cast<int64_t>(value);
}

Mlx5CounterSource::Mlx5CounterSource(std::string sysfs_root, std::string ib_device, uint32_t port,
                                     std::string netdev, EthtoolReader ethtool)
    : sysfs_root_(std::move(sysfs_root)),
      ib_device_(std::move(ib_device)),
      port_(port),
      netdev_(std::move(netdev)),
      ethtool_(std::move(ethtool)) {
  if (!ethtool_) {
    ethtool_ = [](const std::string& netdev) { return read_ethtool_stats(netdev, nullptr); };
  }
}

std::vector<std::string> Mlx5CounterSource::names() const {
  std::vector<std::string> names;
  for (const auto& counter : mlx5_counter_table()) names.push_back(counter.name);
  return names;
}

std::string Mlx5CounterSource::port_folder() const {
  return sysfs_root_ + "/class/infiniband/" + ib_device_ + "/ports/" + std::to_string(port_);
}

int64_t Mlx5CounterSource::read_key(const CounterKey& key,
                                    const std::optional<EthtoolStats>& ethtool) const {
  int64_t value = kUnreadable;
  switch (key.origin) {
    case CounterOrigin::ib_port_hw_counters:
      value = read_counter_file(port_folder() + "/hw_counters/" + key.key);
      if (value == kUnreadable) {
        value = read_counter_file(sysfs_root_ + "/class/infiniband/" + ib_device_ +
                                  "/hw_counters/" + key.key);
      }
      break;
    case CounterOrigin::ib_port_counters:
      value = read_counter_file(port_folder() + "/counters/" + key.key);
      break;
    case CounterOrigin::ethtool:
      if (ethtool) {
        auto found = ethtool->find(key.key);
        if (found != ethtool->end() && found->second <= static_cast<uint64_t>(INT64_MAX))
          value = static_cast<int64_t>(found->second);
      }
      break;
  }
  if (value == kUnreadable || key.scale == 1) return value;
  return value > INT64_MAX / static_cast<int64_t>(key.scale)
             ? kUnreadable
             : value * static_cast<int64_t>(key.scale);
}

HwCounterValues Mlx5CounterSource::read(const std::vector<std::string>& names) {
  // One ethtool round (three ioctls) per read, and none when only sysfs counters are asked for.
  std::optional<EthtoolStats> ethtool;
  if (!netdev_.empty() && needs_ethtool(names)) ethtool = ethtool_(netdev_);
  HwCounterValues values;
  values.reserve(names.size());
  for (const auto& name : names) {
    int64_t value = kUnreadable;
    if (const CanonicalCounter* counter = find_counter(name)) {
      for (const auto& key : counter->keys) {
        value = read_key(key, ethtool);
        if (value != kUnreadable) break;
      }
    }
    values.push_back({name, value});
  }
  return values;
}

HwCounterTracker::HwCounterTracker(std::unique_ptr<HwCounterSource> source,
                                   std::vector<std::string> allow_list)
    : source_(std::move(source)), allow_list_(std::move(allow_list)) {}

std::vector<std::string> HwCounterTracker::reported_names() const {
  if (!allow_list_.empty()) return allow_list_;
  return source_ ? source_->names() : std::vector<std::string>{};
}

void HwCounterTracker::take_baseline() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (baseline_ || !source_) return;
  baseline_ = source_->read(reported_names());
}

bool HwCounterTracker::has_baseline() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return baseline_.has_value();
}

HwCounterValues HwCounterTracker::deltas() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> names = reported_names();
  HwCounterValues result;
  if (!baseline_) {
    for (const auto& name : names) result.push_back({name, kUnreadable});
    return result;
  }
  HwCounterValues now = source_->read(names);
  for (size_t i = 0; i < names.size(); ++i) {
    int64_t before = i < baseline_->size() ? (*baseline_)[i].value : kUnreadable;
    int64_t after = i < now.size() ? now[i].value : kUnreadable;
    bool readable = before != kUnreadable && after != kUnreadable && after >= before;
    result.push_back({names[i], readable ? after - before : kUnreadable});
  }
  return result;
}

HwCounterValues HwCounterTracker::sample(const std::vector<std::string>& names) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!source_) return {};
  std::vector<std::string> wanted;
  for (const auto& name : names) {
    if (allow_list_.empty() || std::find(allow_list_.begin(), allow_list_.end(), name) != allow_list_.end())
      wanted.push_back(name);
  }
  return source_->read(wanted);
}

}  // namespace dissect::telemetry
