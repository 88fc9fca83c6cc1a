// The doctor's verdicts. Each check is a pure function of DoctorInputs; whether a finding fails or
// only warns depends on the provider asked for (doctor.h explains which checks are required).
#include <algorithm>
#include <sstream>

#include "dissect/doctor/doctor.h"

namespace dissect::doctor {
namespace {

constexpr uint64_t kMemlockRequired = 64ull << 20;  // verbs pin queues and MRs against it

bool wants_mlx5(const DoctorInputs& in) { return in.provider == "mlx5"; }
bool wants_nic(const DoctorInputs& in) { return in.provider == "mlx5" || in.provider == "ibverbs"; }
// Missing hardware fails only when the chosen provider needs it.
Verdict missing(bool required) { return required ? Verdict::fail : Verdict::warn; }

std::string join(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

bool has_active_port(const NicInfo& nic) {
  return std::any_of(nic.ports.begin(), nic.ports.end(),
                     [](const NicPort& p) { return p.state.find("ACTIVE") != std::string::npos; });
}

bool is_mlx5(const NicInfo& nic) { return nic.device.name.rfind("mlx5_", 0) == 0; }

const char* kSoftnicNote =
    "everything runs on the softnic model of the NIC (host-thread or GPU-kernel engine); "
    "every number it produces is labelled softnic";

CheckResult check_gpu(const DoctorInputs& in) {
  CheckResult r{"GPU and driver", Verdict::ok, "", ""};
  if (!in.cuda.library_found) {
    r.verdict = missing(wants_mlx5(in));
    r.found = "no CUDA driver (libcuda.so.1 not loadable); " +
              std::to_string(in.gpus.size()) + " NVIDIA PCI device(s) in sysfs";
    r.advice = "install the NVIDIA driver for GPU experiments; the CPU tier runs without one";
    return r;
  }
  if (in.cuda.init_result != 0 || in.cuda.device_count == 0) {
    r.verdict = missing(wants_mlx5(in));
    r.found = "CUDA driver present but cuInit returned " + std::to_string(in.cuda.init_result) +
              " with " + std::to_string(in.cuda.device_count) + " device(s)";
    r.advice = "check nvidia-smi and CUDA_VISIBLE_DEVICES";
    return r;
  }
  r.found = std::to_string(in.cuda.device_count) + " CUDA device(s), driver API " +
            std::to_string(in.cuda.driver_version / 1000) + "." +
            std::to_string(in.cuda.driver_version % 1000 / 10);
  return r;
}

CheckResult check_nics(const DoctorInputs& in) {
  CheckResult r{"RDMA NICs and link layer", Verdict::ok, "", ""};
  if (in.nics.empty()) {
    r.verdict = missing(wants_nic(in));
    r.found = "no RDMA NIC (/sys/class/infiniband is empty or absent)";
    r.advice = wants_nic(in) ? "load mlx5_ib / check the NIC, or run with --provider softnic"
                             : kSoftnicNote;
    return r;
  }
  std::vector<std::string> parts;
  bool any_active = false;
  bool any_mlx5 = false;
  for (const NicInfo& nic : in.nics) {
    std::vector<std::string> ports;
    for (const NicPort& p : nic.ports) {
      ports.push_back("port " + std::to_string(p.port) + " " + p.link_layer + " " + p.state);
    }
    parts.push_back(nic.device.name + " (" + nic.device.address + ": " + join(ports, ", ") + ")");
    any_active = any_active || has_active_port(nic);
    any_mlx5 = any_mlx5 || is_mlx5(nic);
  }
  r.found = join(parts, "; ");
  if (wants_mlx5(in) && !any_mlx5) {
    r.verdict = Verdict::fail;
    r.advice = "the mlx5 provider needs a ConnectX (mlx5_*) device; use --provider ibverbs";
  } else if (!any_active) {
    r.verdict = missing(wants_nic(in));
    r.advice = "no port is ACTIVE: check cabling, the subnet manager (IB) or the link (RoCE)";
  }
  return r;
}

CheckResult check_peer_mapping(const DoctorInputs& in) {
  CheckResult r{"PeerMappingOverride (GPU rings the NIC doorbell)", Verdict::ok, "", ""};
  if (in.nics.empty()) {
    r.verdict = Verdict::skip;
    r.found = "no NIC: the softnic doorbell is ordinary memory";
    return r;
  }
  const std::string memops = in.enable_stream_memops
                                 ? ", EnableStreamMemOPs=" + std::to_string(*in.enable_stream_memops)
                                 : "";
  if (in.peer_mapping_override) {
    r.found = "PeerMappingOverride=1" + memops;
  } else if (in.running_as_root) {
    r.found = "not set, but running as root: MMIO peer mappings are allowed" + memops;
  } else {
    r.verdict = Verdict::warn;
    r.found = in.nvidia_params_found ? "not set and not root" + memops
                                     : "/proc/driver/nvidia/params not readable";
    r.advice = "the mlx5 provider will use CPU-assisted doorbells; for GPU doorbells add "
               "options nvidia NVreg_RegistryDwords=\"PeerMappingOverride=1;\" to "
               "/etc/modprobe.d/nvidia.conf, update-initramfs -u, reboot";
  }
  return r;
}

CheckResult check_gpu_memory_registration(const DoctorInputs& in) {
  CheckResult r{"GPU memory registration (DMA-BUF or nvidia-peermem)", Verdict::ok, "", ""};
  const bool dma_buf = std::any_of(in.cuda.dma_buf_supported.begin(),
                                   in.cuda.dma_buf_supported.end(), [](int v) { return v != 0; });
  if (in.nics.empty()) {
    r.verdict = Verdict::skip;
    r.found = std::string("no NIC; DMA-BUF ") + (dma_buf ? "supported" : "not reported") +
              ", nvidia-peermem " + (in.nvidia_peermem ? "loaded" : "not loaded");
    return r;
  }
  if (dma_buf || in.nvidia_peermem) {
    r.found = std::string(dma_buf ? "DMA-BUF supported (ibv_reg_dmabuf_mr)" : "") +
              (dma_buf && in.nvidia_peermem ? "; " : "") +
              (in.nvidia_peermem ? "nvidia-peermem loaded" : "");
    return r;
  }
  r.verdict = missing(wants_mlx5(in));
  r.found = "neither DMA-BUF (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED) nor nvidia-peermem";
  r.advice = "use the open GPU kernel modules with a DMA-BUF capable kernel, or modprobe "
             "nvidia-peermem (needs MOFED peer-memory support)";
  return r;
}

std::string bytes_text(uint64_t bytes) {
  if (bytes >= (1ull << 30)) return std::to_string(bytes >> 30) + " GiB";
  if (bytes >= (1ull << 20)) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes >> 10) + " KiB";
}

CheckResult check_memlock(const DoctorInputs& in) {
  CheckResult r{"locked-memory limit (RLIMIT_MEMLOCK)", Verdict::ok, "", ""};
  if (!in.memlock_soft_bytes) {
    r.found = "unlimited";
    return r;
  }
  r.found = bytes_text(*in.memlock_soft_bytes);
  if (*in.memlock_soft_bytes >= kMemlockRequired) return r;
  r.verdict = wants_nic(in) ? Verdict::fail : Verdict::warn;
  r.advice = "verbs pins queues and MRs against this limit (ibv_create_cq fails with ENOMEM); "
             "ulimit -l unlimited, or memlock in /etc/security/limits.conf, or "
             "docker --ulimit memlock=-1";
  if (!wants_nic(in)) r.advice = "only the NIC providers need it: " + r.advice;
  return r;
}

const PciDevice* gpu_for(const DoctorInputs& in, size_t index) {
  return index < in.gpus.size() ? &in.gpus[index] : nullptr;
}

CheckResult check_distance(const DoctorInputs& in) {
  CheckResult r{"GPU-NIC PCIe distance", Verdict::ok, "", ""};
  if (in.nics.empty() || in.gpus.empty()) {
    r.verdict = Verdict::skip;
    r.found = in.nics.empty() ? "no NIC" : "no GPU in sysfs";
    return r;
  }
  std::vector<PciDevice> nic_devices;
  for (const NicInfo& nic : in.nics) nic_devices.push_back(nic.device);
  std::vector<std::string> parts;
  for (size_t g = 0; g < in.gpus.size(); ++g) {
    try {
      const NicChoice c = select_nic(*gpu_for(in, g), nic_devices, in.dissect_nic,
                                     static_cast<int>(g));
      parts.push_back("GPU " + in.gpus[g].address + " -> " + c.nic + " (" + to_string(c.distance) +
                      (c.overridden ? ", DISSECT_NIC" : "") + ")");
      if (c.distance != PciDistance::same_switch) r.verdict = Verdict::warn;
    } catch (const std::exception& e) {
      r.verdict = missing(wants_nic(in));
      parts.push_back(std::string("GPU ") + in.gpus[g].address + ": " + e.what());
    }
  }
  r.found = join(parts, "; ");
  if (r.verdict == Verdict::warn) {
    r.advice = "traffic between a GPU and a NIC not under one PCIe switch crosses the root "
               "complex or the socket link; set DISSECT_NIC per local rank if the choice is wrong";
  }
  return r;
}

CheckResult check_numa(const DoctorInputs& in) {
  CheckResult r{"NIC NUMA node and free cores", Verdict::ok, "", ""};
  if (in.nics.empty()) {
    r.verdict = Verdict::skip;
    r.found = "no NIC";
    return r;
  }
  std::vector<std::string> parts;
  for (const NicInfo& nic : in.nics) {
    int usable = 0;
    for (int cpu : nic.numa_cpus) {
      usable += std::count(in.allowed_cpus.begin(), in.allowed_cpus.end(), cpu) ? 1 : 0;
    }
    std::string part = nic.device.name + ": node " + std::to_string(nic.device.numa_node);
    if (nic.device.numa_node >= 0) {
      part += ", " + std::to_string(usable) + " of " + std::to_string(nic.numa_cpus.size()) +
              " cores usable by this process";
      if (usable == 0) r.verdict = Verdict::warn;
    }
    parts.push_back(part);
  }
  r.found = join(parts, "; ");
  if (r.verdict == Verdict::warn) {
    r.advice = "proxy workers and CPU-assisted doorbells should run on the NIC's node: "
               "widen the CPU affinity (taskset / numactl --cpunodebind)";
  }
  return r;
}

CheckResult check_gdrcopy(const DoctorInputs& in) {
  CheckResult r{"GDRCopy (/dev/gdrdrv)", Verdict::ok, "", ""};
  if (in.gdrdrv) {
    r.found = "present";
  } else if (in.nics.empty()) {
    r.verdict = Verdict::skip;
    r.found = "absent; not used without a NIC";
  } else {
    r.verdict = Verdict::warn;
    r.found = "absent (optional)";
    r.advice = "CPU-assisted doorbells then watch a producer word in mapped host memory; "
               "install gdrcopy to keep it in GPU memory";
  }
  return r;
}

CheckResult check_clocks(const DoctorInputs& in) {
  CheckResult r{"CPU clock states", Verdict::ok, "", ""};
  int with_cpufreq = 0;
  int performance = 0;
  long min_khz = -1;
  for (const CpuClock& c : in.clocks) {
    if (c.governor.empty()) continue;
    ++with_cpufreq;
    performance += c.governor == "performance" ? 1 : 0;
    if (c.cur_khz > 0 && (min_khz < 0 || c.cur_khz < min_khz)) min_khz = c.cur_khz;
  }
  if (with_cpufreq == 0) {
    r.verdict = Verdict::skip;
    r.found = "no cpufreq in sysfs (VM or container): clocks not visible";
    return r;
  }
  r.found = std::to_string(performance) + " of " + std::to_string(with_cpufreq) +
            " CPUs use the performance governor";
  if (min_khz > 0) r.found += ", slowest at " + std::to_string(min_khz / 1000) + " MHz";
  if (performance < with_cpufreq) {
    r.verdict = Verdict::warn;
    r.advice = "proxy and doorbell latencies vary with CPU frequency: "
               "cpupower frequency-set -g performance (where you are allowed to)";
  }
  return r;
}

}  // namespace

const char* verdict_tag(Verdict verdict) {
  switch (verdict) {
    case Verdict::ok: return "[ OK ]";
    case Verdict::warn: return "[WARN]";
    case Verdict::fail: return "[FAIL]";
    case Verdict::skip: return "[SKIP]";
  }
  return "[????]";
}

std::vector<CheckResult> evaluate(const DoctorInputs& in) {
  return {check_gpu(in),     check_nics(in),     check_peer_mapping(in),
          check_gpu_memory_registration(in),     check_memlock(in),
          check_distance(in), check_numa(in),    check_gdrcopy(in),
          check_clocks(in)};
}

int run_doctor(const DoctorInputs& inputs, std::ostream& out) {
  out << "dissect doctor (provider " << inputs.provider << ")\n";
  int failures = 0;
  for (const CheckResult& r : evaluate(inputs)) {
    out << verdict_tag(r.verdict) << ' ' << r.name << ": " << r.found;
    if (!r.advice.empty()) out << " -- " << r.advice;
    out << '\n';
    failures += r.verdict == Verdict::fail ? 1 : 0;
  }
  if (failures > 0) {
    out << failures << " required check(s) failed for --provider " << inputs.provider << '\n';
    return 1;
  }
  if (inputs.nics.empty()) {
    out << "No RDMA NIC here: " << kSoftnicNote << ".\n";
  }
  out << "Ready for --provider " << inputs.provider << '\n';
  return 0;
}

}  // namespace dissect::doctor
