// gather_inputs: everything the doctor reads from the running system, in one place.
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>

#include "cuda_probe.h"
#include "dissect/doctor/doctor.h"
#include "sysfs_read.h"

namespace dissect::doctor {
namespace {

std::vector<NicPort> read_ports(const std::string& nic_dir) {
  std::vector<NicPort> ports;
  for (const std::string& port : list_dir(nic_dir + "/ports")) {
    NicPort p;
    p.port = std::atoi(port.c_str());
    p.link_layer = read_text(nic_dir + "/ports/" + port + "/link_layer");
    p.state = read_text(nic_dir + "/ports/" + port + "/state");
    ports.push_back(p);
  }
  return ports;
}

std::vector<NicInfo> read_nics(const std::string& sysfs) {
  std::vector<NicInfo> nics;
  for (const PciDevice& device : find_rdma_nics(sysfs)) {
    NicInfo nic;
    nic.device = device;
    nic.ports = read_ports(sysfs + "/class/infiniband/" + device.name);
    if (device.numa_node >= 0) {
      nic.numa_cpus = parse_cpulist(read_text(sysfs + "/devices/system/node/node" +
                                              std::to_string(device.numa_node) + "/cpulist"));
    }
    nics.push_back(nic);
  }
  return nics;
}

void read_nvidia_params(const std::string& proc, DoctorInputs& in) {
  const std::string params = read_text(proc + "/driver/nvidia/params");
  in.nvidia_params_found = !params.empty();
  in.peer_mapping_override = params.find("PeerMappingOverride=1") != std::string::npos;
  const std::string key = "EnableStreamMemOPs: ";
  const size_t at = params.find(key);
  if (at != std::string::npos) in.enable_stream_memops = std::atol(params.c_str() + at + key.size());
}

bool peermem_present(const std::string& sysfs) {
  // The three places NVSHMEM looks (transport_ib_common.cpp).
  return path_exists(sysfs + "/kernel/mm/memory_peers/nv_mem/version") ||
         path_exists(sysfs + "/kernel/mm/memory_peers/nvidia-peermem/version") ||
         path_exists(sysfs + "/module/nvidia_peermem");
}

std::vector<CpuClock> read_clocks(const std::string& sysfs) {
  std::vector<CpuClock> clocks;
  const std::string base = sysfs + "/devices/system/cpu";
  for (const std::string& name : list_dir(base)) {
    if (name.rfind("cpu", 0) != 0 || name.size() < 4 || !std::isdigit(name[3])) continue;
    CpuClock c;
    c.cpu = std::atoi(name.c_str() + 3);
    c.governor = read_text(base + "/" + name + "/cpufreq/scaling_governor");
    c.cur_khz = read_long(base + "/" + name + "/cpufreq/scaling_cur_freq", -1);
    clocks.push_back(c);
  }
  return clocks;
}

std::vector<int> affinity() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

int local_rank_from_env() {
  for (const char* name : {"DISSECT_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID",
                           "MPI_LOCALRANKID"}) {
    const std::string v = env_or_empty(name);
    if (!v.empty()) return std::atoi(v.c_str());
  }
  return 0;
}

}  // namespace

DoctorInputs gather_inputs(const GatherOptions& options) {
  DoctorInputs in;
  if (options.probe_cuda) in.cuda = probe_cuda_driver();
  in.gpus = find_gpus(options.sysfs_root);
  in.nics = read_nics(options.sysfs_root);
  read_nvidia_params(options.proc_root, in);
  in.nvidia_peermem = peermem_present(options.sysfs_root);
  in.gdrdrv = path_exists(options.dev_root + "/gdrdrv");
  in.running_as_root = geteuid() == 0;
  rlimit limit{};
  if (getrlimit(RLIMIT_MEMLOCK, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    in.memlock_soft_bytes = static_cast<uint64_t>(limit.rlim_cur);
  }
  in.allowed_cpus = affinity();
  in.clocks = read_clocks(options.sysfs_root);
  in.dissect_nic = env_or_empty("DISSECT_NIC");
  in.local_rank = local_rank_from_env();
  return in;
}

}  // namespace dissect::doctor
