// Appendix C.1 bookkeeping shared by the proxy experiments: clock states as environment entries.
#include <string>

#include "dissect/bench/proxy_experiments.h"

namespace dissect::bench {

void add_clock_environment(const std::vector<proxy::CpuClockState>& clocks, const std::string& prefix,
                           std::vector<std::pair<std::string, std::string>>* environment) {
  for (size_t w = 0; w < clocks.size(); ++w) {
    const auto& c = clocks[w];
    const std::string key = prefix + "worker" + std::to_string(w);
    environment->push_back({key + ".cpu", c.cpu < 0 ? "unpinned" : std::to_string(c.cpu)});
    environment->push_back({key + ".scaling_cur_freq_khz", c.current_khz});
    environment->push_back({key + ".scaling_governor", c.governor});
    environment->push_back({key + ".cpuinfo_max_freq_khz", c.max_khz});
  }
}

}  // namespace dissect::bench
