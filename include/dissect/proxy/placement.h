// Worker placement: which core each worker runs on, and the state of that core's clock.
#pragma once

#include <string>
#include <vector>

namespace dissect::proxy {

// NUMA node of an RDMA device (/sys/class/infiniband/<device>/device/numa_node), -1 if unknown.
int nic_numa_node(const std::string& device);
// CPUs of a NUMA node (/sys/devices/system/node/node<N>/cpulist); empty if unknown.
std::vector<int> node_cpus(int node);
// Parses a Linux cpulist ("0-3,8,10-11"); throws InvalidArgument naming the text.
std::vector<int> parse_cpu_list(const std::string& text);

// Appendix C.1: the clock state of one CPU, "unavailable" where the host does not expose it.
struct CpuClockState {
  int cpu = -1;                      // -1: the worker was not pinned
  std::string current_khz = "unavailable";  // scaling_cur_freq
  std::string governor = "unavailable";     // scaling_governor
  std::string max_khz = "unavailable";      // cpuinfo_max_freq
};
CpuClockState read_cpu_clock_state(int cpu);

}  // namespace dissect::proxy
