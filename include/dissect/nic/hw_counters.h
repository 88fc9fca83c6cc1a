// Hardware counters: one canonical vocabulary, deltas against a first-use baseline, -1 = unreadable.
// In the nic layer: a NIC (the mlx5 provider, the softnic model) implements HwCounterSource, and
// telemetry above tracks it; names in dissect::telemetry, the vocabulary.
//
// Contract
// - HwCounterSource is what a device offers: the mlx5 source reads the port's IB sysfs counters
//   and the netdev's ethtool statistics; the softnic implements the interface to report its model
//   counters under the same canonical names. read() is called at most three places: first use
//   (baseline), finalise, and the sampler thread; never on the data path.
// - Threads: HwCounterTracker is thread-safe (its own mutex). A source is only called through its
//   tracker, so a source need not be thread-safe.
// - -1 means "could not be read" and is never produced as a real value: a counter a device does
//   not expose reads -1, never 0, so "not available" is not mistaken for "no events" (the page).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dissect::telemetry {

inline constexpr int64_t kUnreadable = -1;

struct HwCounterValue {
  std::string name;  // canonical name
  int64_t value;     // kUnreadable when it could not be read
};
using HwCounterValues = std::vector<HwCounterValue>;

class HwCounterSource {
 public:
  virtual ~HwCounterSource() = default;
  // Every canonical name this source knows, in the order it reports them.
  virtual std::vector<std::string> names() const = 0;
  // Absolute values of the named counters, one entry per name asked for and in that order;
  // kUnreadable for a name it cannot read or does not know.
  virtual HwCounterValues read(const std::vector<std::string>& names) = 0;
};

}  // namespace dissect::telemetry
