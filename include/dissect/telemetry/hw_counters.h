// Hardware counters, telemetry's side: the mlx5 source (IB sysfs counters and ethtool statistics)
// and the tracker that keeps a device's baseline and deltas. The interface a NIC implements,
// HwCounterSource, is in the nic layer (nic/hw_counters.h).
//
// - Threads: HwCounterTracker is thread-safe (its own mutex). A source is only called through its
//   tracker, so a source need not be thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "dissect/nic/hw_counters.h"

namespace dissect::telemetry {

// Where an mlx5 counter comes from.
enum class CounterOrigin { ib_port_hw_counters, ib_port_counters, ethtool };

struct CounterKey {
  CounterOrigin origin;
  std::string key;     // file name under the sysfs folder, or the ethtool statistic name
  uint64_t scale = 1;  // port_xmit_data counts 4-byte words: scale 4 gives bytes
};

struct CanonicalCounter {
  std::string name;
  std::vector<CounterKey> keys;  // first readable key wins
};

// bench.md §3.4's set plus the IB port counters and the per-priority PFC counters.
const std::vector<CanonicalCounter>& mlx5_counter_table();
// The congestion set the sampler reads (IB sysfs only, so a tick never issues an ioctl).
const std::vector<std::string>& congestion_counter_names();

using EthtoolStats = std::map<std::string, uint64_t>;
// Reads a netdev's statistics with ioctl(SIOCETHTOOL): ETHTOOL_GSSET_INFO, ETHTOOL_GSTRINGS,
// ETHTOOL_GSTATS. nullopt on any failure, with the reason in *reason when given.
std::optional<EthtoolStats> read_ethtool_stats(const std::string& netdev, std::string* reason);
using EthtoolReader = std::function<std::optional<EthtoolStats>(const std::string& netdev)>;

// Reads "<sysfs_root>/class/infiniband/<ib_device>/ports/<port>/{hw_counters,counters}/<key>"
// (and the device-level hw_counters folder as a fallback) and the netdev's ethtool statistics.
class Mlx5CounterSource : public HwCounterSource {
 public:
  Mlx5CounterSource(std::string sysfs_root, std::string ib_device, uint32_t port, std::string netdev,
                    EthtoolReader ethtool = nullptr);
  std::vector<std::string> names() const override;
  HwCounterValues read(const std::vector<std::string>& names) override;

 private:
  int64_t read_key(const CounterKey& key, const std::optional<EthtoolStats>& ethtool) const;
  std::string port_folder() const;

  std::string sysfs_root_;
  std::string ib_device_;
  uint32_t port_;
  std::string netdev_;
  EthtoolReader ethtool_;
};

// Reads one sysfs counter file as a decimal integer; kUnreadable if it is missing, not a regular
// readable file, or not a number.
int64_t read_counter_file(const std::string& path);

// One device's baseline and deltas.
class HwCounterTracker {
 public:
  // `allow_list` empty: every name the source knows. Otherwise exactly these names, in this order.
  HwCounterTracker(std::unique_ptr<HwCounterSource> source, std::vector<std::string> allow_list);

  // First use of the device: reads the baseline. Later calls do nothing.
  void take_baseline();
  bool has_baseline() const;
  // Value now minus baseline for every reported name; kUnreadable where either side is, where the
  // counter went backwards, or for every name when no baseline was taken (device never used).
  HwCounterValues deltas();
  // Absolute values of `names` restricted to the reported set (for the sampler).
  HwCounterValues sample(const std::vector<std::string>& names);

 private:
  std::vector<std::string> reported_names() const;

  mutable std::mutex mutex_;
  std::unique_ptr<HwCounterSource> source_;
  std::vector<std::string> allow_list_;
  std::optional<HwCounterValues> baseline_;
};

}  // namespace dissect::telemetry
