// Which GPU and which NIC a PE uses, from its local rank.
//
//  - GPU: local_rank % visible_gpus (CUDA device index; the caller passes the count, so this needs
//    no CUDA). No visible GPU: -1.
//  - NIC: DISSECT_NIC when set (one name for all PEs, or a comma list indexed by local rank), else
//    the RDMA NIC closest to the GPU on the PCIe tree (doctor/pci_topology.h: same switch, then
//    same root complex, then same NUMA node). The GPU's PCI address comes from
//    `gpu_pci_bus_ids[gpu]` when the caller passes them (cudaDeviceGetPCIBusId: right under
//    CUDA_VISIBLE_DEVICES too), else from the sysfs GPUs in PCI order (right with
//    CUDA_DEVICE_ORDER=PCI_BUS_ID and no CUDA_VISIBLE_DEVICES). When the GPU's place is unknown
//    the NIC is the local rank's modulo the NICs found, and the description says so.
//  - No RDMA NIC: nic is empty; the softnic serves.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dissect/doctor/pci_topology.h"

namespace dissect::bootstrap {

struct DeviceOptions {
  std::string sysfs_root = "/sys";
  std::optional<std::string> nic_override;    // unset: read DISSECT_NIC; "" = no override
  std::vector<std::string> gpu_pci_bus_ids;   // per visible CUDA device, "0000:03:00.0"; optional
};

struct DeviceSelection {
  int gpu = -1;              // CUDA device index; -1 = none visible
  std::string gpu_pci;       // its PCI address, empty when unknown
  std::string nic;           // RDMA device name; empty = none (softnic)
  doctor::PciDistance distance = doctor::PciDistance::cross_socket;  // GPU to NIC
  bool distance_known = false;
  bool nic_overridden = false;  // chosen by DISSECT_NIC
  std::string description;   // one line for reports: "local rank 1: GPU 1 (0000:13:00.0), NIC ..."
};

// Throws InvalidArgument when local_rank < 0, visible_gpus < 0 or DISSECT_NIC names a NIC that
// does not exist (or has no entry for this local rank); the message names DISSECT_NIC's value.
DeviceSelection select_devices(int local_rank, int visible_gpus, const DeviceOptions& options = {});

}  // namespace dissect::bootstrap
