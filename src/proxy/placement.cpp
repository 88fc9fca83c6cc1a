#include "dissect/proxy/placement.h"

#include <fstream>
#include <sstream>

#include "dissect/common/error.h"

namespace dissect::proxy {

namespace {
// The first line of a sysfs file, or "" when it cannot be read.
std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  return line;
}
}  // namespace

int nic_numa_node(const std::string& device) {
  const std::string text = read_line("/sys/class/infiniband/" + device + "/device/numa_node");
  if (text.empty()) return -1;
  try {
    return std::stoi(text);
  } catch (const std::exception&) {
    return -1;
  }
}

std::vector<int> parse_cpu_list(const std::string& text) {
  std::vector<int> cpus;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    if (part.empty()) continue;
    try {
      const size_t dash = part.find('-');
      const int first = std::stoi(part.substr(0, dash));
      const int last = dash == std::string::npos ? first : std::stoi(part.substr(dash + 1));
      if (first < 0 || last < first) throw InvalidArgument("range");
      for (int c = first; c <= last; ++c) cpus.push_back(c);
    } catch (const std::exception&) {
      throw InvalidArgument("bad cpu list '" + text + "' at '" + part + "'");
    }
  }
  return cpus;
}

std::vector<int> node_cpus(int node) {
  if (node < 0) return {};
  const std::string text = read_line("/sys/devices/system/node/node" + std::to_string(node) + "/cpulist");
  return text.empty() ? std::vector<int>{} : parse_cpu_list(text);
}

CpuClockState read_cpu_clock_state(int cpu) {
  CpuClockState state;
  state.cpu = cpu;
  const int which = cpu < 0 ? 0 : cpu;  // an unpinned worker: report cpu0's policy as a hint
  const std::string base = "/sys/devices/system/cpu/cpu" + std::to_string(which) + "/cpufreq/";
  auto value_or = [](const std::string& v) { return v.empty() ? std::string("unavailable") : v; };
  state.current_khz = value_or(read_line(base + "scaling_cur_freq"));
  state.governor = value_or(read_line(base + "scaling_governor"));
  state.max_khz = value_or(read_line(base + "cpuinfo_max_freq"));
  return state;
}

}  // namespace dissect::proxy
