// PCIe locality between GPUs and RDMA NICs, read from sysfs (root injectable for tests).
//
// A PCI device's place in the tree is the chain of directories under <sysfs>/devices that its
// sysfs link resolves to: "pci0000:00" (a host bridge, i.e. a root complex), then a root port,
// then switch ports, then the device. Distances follow NCCL's topology classes: two devices whose
// chains share a root port or anything below it talk through a PCIe switch (PIX/PXB); sharing only
// the host bridge means through the root complex (PHB); otherwise the NUMA nodes decide (NODE or
// SYS).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace dissect::doctor {

struct PciDevice {
  std::string name;                // "mlx5_0", or the PCI address for a GPU
  std::string address;             // "0000:03:00.0"
  std::vector<std::string> chain;  // "pci0000:00", "0000:00:01.0", ..., address
  int numa_node = -1;              // -1 when the platform does not say
};

enum class PciDistance { same_switch = 0, same_root_complex = 1, same_numa_node = 2, cross_socket = 3 };
const char* to_string(PciDistance distance);

PciDistance pci_distance(const PciDevice& a, const PciDevice& b);

// Resolves a sysfs device link or directory (e.g. <root>/class/infiniband/mlx5_0/device) into its
// chain under <root>/devices. Returns nullopt when the path does not lead into a PCI tree.
std::optional<PciDevice> resolve_pci_device(const std::string& sysfs_root,
                                            const std::string& device_path);

// NVIDIA display/3D controllers under <root>/bus/pci/devices (vendor 0x10de, class 0x03xxxx),
// ordered by PCI address (the order CUDA uses with CUDA_DEVICE_ORDER=PCI_BUS_ID).
std::vector<PciDevice> find_gpus(const std::string& sysfs_root);

// RDMA devices under <root>/class/infiniband, ordered by name.
std::vector<PciDevice> find_rdma_nics(const std::string& sysfs_root);

struct NicChoice {
  std::string nic;  // empty when there is no NIC
  PciDistance distance = PciDistance::cross_socket;
  bool overridden = false;  // chosen by DISSECT_NIC
};

// The NIC closest to `gpu`; ties go to the deeper shared ancestor, then to the lower name.
// `override_spec` is DISSECT_NIC: one name for every rank ("mlx5_2"), or a comma list indexed by
// `local_rank` ("mlx5_0,mlx5_1,mlx5_2,mlx5_3"). Throws std::invalid_argument when it names a NIC
// that does not exist or the list is shorter than local_rank + 1.
NicChoice select_nic(const PciDevice& gpu, const std::vector<PciDevice>& nics,
                     const std::string& override_spec, int local_rank);

}  // namespace dissect::doctor
