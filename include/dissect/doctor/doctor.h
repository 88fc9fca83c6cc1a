// `dissect doctor`: checks the machine for what each provider needs and says what to do.
//
// Two halves, so the verdicts are testable without hardware:
//  - gather_inputs() reads the real system once (sysfs, procfs, /dev, the environment, the CUDA
//    driver through dlopen so nothing links against CUDA, getrlimit);
//  - run_doctor() turns a DoctorInputs into one line per check and an exit code.
//
// Which checks are required depends on the provider asked for:
//  - softnic (default): nothing is required. Every check that finds missing hardware warns or
//    skips and the exit code is 0: the softnic model runs everything on this machine, and every
//    number it produces is labelled "softnic".
//  - mlx5: required are a CUDA GPU, an mlx5 NIC with an active port, a way to register GPU memory
//    (DMA-BUF or nvidia-peermem), and a memlock limit of at least 64 MiB (or unlimited). A missing
//    PeerMappingOverride only warns: the provider falls back to CPU-assisted doorbells.
//  - ibverbs: required are an RDMA NIC with an active port and the memlock limit.
// Exit code: 0 when no required check failed, 1 otherwise, 2 on a usage error.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "dissect/doctor/pci_topology.h"

namespace dissect::doctor {

struct NicPort {
  int port = 0;
  std::string link_layer;  // "InfiniBand" or "Ethernet" (sysfs ports/N/link_layer)
  std::string state;       // "4: ACTIVE", ...
};

struct NicInfo {
  PciDevice device;
  std::vector<NicPort> ports;
  std::vector<int> numa_cpus;  // CPUs of the NIC's NUMA node (empty when unknown)
};

struct CudaProbe {
  bool library_found = false;  // libcuda.so.1 could be dlopened
  int init_result = -1;        // cuInit's CUresult (0 = success)
  int device_count = 0;
  int driver_version = 0;      // cuDriverGetVersion: 13000 = 13.0
  std::vector<std::string> pci_bus_ids;
  std::vector<int> dma_buf_supported;  // CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED per device
};

struct CpuClock {
  int cpu = 0;
  std::string governor;  // empty when cpufreq is absent
  long cur_khz = -1;
};

struct DoctorInputs {
  std::string provider = "softnic";  // softnic | mlx5 | ibverbs
  CudaProbe cuda;
  std::vector<PciDevice> gpus;  // NVIDIA PCI functions found in sysfs
  std::vector<NicInfo> nics;
  bool nvidia_params_found = false;         // /proc/driver/nvidia/params readable
  bool peer_mapping_override = false;       // RegistryDwords contains PeerMappingOverride=1
  std::optional<long> enable_stream_memops; // EnableStreamMemOPs
  bool nvidia_peermem = false;              // module or memory_peers entry
  bool gdrdrv = false;                      // /dev/gdrdrv
  bool running_as_root = false;
  std::optional<uint64_t> memlock_soft_bytes;  // nullopt = unlimited
  std::vector<int> allowed_cpus;               // this process's affinity
  std::vector<CpuClock> clocks;
  std::string dissect_nic;                     // DISSECT_NIC
  int local_rank = 0;
};

struct GatherOptions {
  std::string sysfs_root = "/sys";
  std::string proc_root = "/proc";
  std::string dev_root = "/dev";
  bool probe_cuda = true;
};

DoctorInputs gather_inputs(const GatherOptions& options);

enum class Verdict { ok, warn, fail, skip };
const char* verdict_tag(Verdict verdict);  // "[ OK ]", "[WARN]", "[FAIL]", "[SKIP]"

struct CheckResult {
  std::string name;
  Verdict verdict = Verdict::skip;
  std::string found;
  std::string advice;  // empty when nothing needs doing
};

// The checks in order: GPU and driver, NICs and link layer, PeerMappingOverride, nvidia-peermem
// or DMA-BUF, memlock, GPU-NIC PCIe distance, NIC NUMA node and free cores, GDRCopy, clocks.
std::vector<CheckResult> evaluate(const DoctorInputs& inputs);

// Prints one line per check and a summary; returns the exit code described above.
int run_doctor(const DoctorInputs& inputs, std::ostream& out);

}  // namespace dissect::doctor
