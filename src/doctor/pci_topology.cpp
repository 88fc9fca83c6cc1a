// The PCIe walker stays hand-written rather than built on hwloc (libhwloc-dev), for these reasons
// (checked with hwloc 2.9, Debian bookworm):
// - the tests and DISSECT_NIC selection pass the sysfs root as an argument (FakeSysfs trees, one per
//   test); hwloc takes another root only through the process-wide HWLOC_FSROOT environment
//   variable, read at topology load (it does find a fake tree's PCI devices and mlx5 OS devices that
//   way, after logging that it found no CPU topology), so tests would serialize on setenv;
// - hwloc reads the same files (class/infiniband/<nic>/device, bus/pci/devices/*/vendor and class,
//   numa_node) and adds nothing to the three questions asked here: which GPUs and NICs, which
//   ancestors they share, which NUMA node;
// - bootstrap and the mlx5 provider would link libhwloc and libudev and load the whole machine's
//   topology (CPUs, caches, every I/O device) at each rank's start for one lookup.
// If the doctor ever needs what hwloc knows and sysfs does not say plainly (NVLink/NVSwitch
// links, the PCIe link speed along the path, cpusets for pinning), that is the point to switch.
#include "dissect/doctor/pci_topology.h"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "sysfs_read.h"

namespace dissect::doctor {

namespace fs = std::filesystem;

const char* to_string(PciDistance distance) {
  switch (distance) {
    case PciDistance::same_switch: return "same PCIe switch";
    case PciDistance::same_root_complex: return "same root complex";
    case PciDistance::same_numa_node: return "same NUMA node, different root complex";
    case PciDistance::cross_socket: return "cross-socket";
  }
  return "?";
}

namespace {

size_t shared_prefix(const PciDevice& a, const PciDevice& b) {
  size_t n = 0;
  while (n < a.chain.size() && n < b.chain.size() && a.chain[n] == b.chain[n]) ++n;
  return n;
}

bool is_host_bridge(const std::string& component) { return component.rfind("pci", 0) == 0; }

}  // namespace

PciDistance pci_distance(const PciDevice& a, const PciDevice& b) {
  const size_t shared = shared_prefix(a, b);
  // A root port has one link: two devices below the same one sit behind a switch.
  if (shared >= 2) return PciDistance::same_switch;
  if (shared == 1 && is_host_bridge(a.chain[0])) return PciDistance::same_root_complex;
  if (a.numa_node >= 0 && a.numa_node == b.numa_node) return PciDistance::same_numa_node;
  return PciDistance::cross_socket;
}

std::optional<PciDevice> resolve_pci_device(const std::string& sysfs_root,
                                            const std::string& device_path) {
  std::error_code ec;
  const fs::path real = fs::canonical(device_path, ec);
  if (ec) return std::nullopt;
  const fs::path devices = fs::canonical(fs::path(sysfs_root) / "devices", ec);
  if (ec) return std::nullopt;
  const fs::path relative = real.lexically_relative(devices);
  if (relative.empty() || *relative.begin() == "..") return std::nullopt;
  PciDevice device;
  for (const fs::path& part : relative) device.chain.push_back(part.string());
  if (device.chain.size() < 2 || !is_host_bridge(device.chain.front())) return std::nullopt;
  device.address = device.chain.back();
  device.name = device.address;
  device.numa_node = static_cast<int>(read_long((real / "numa_node").string(), -1));
  return device;
}

std::vector<PciDevice> find_gpus(const std::string& sysfs_root) {
  std::vector<PciDevice> gpus;
  const std::string bus = sysfs_root + "/bus/pci/devices";
  for (const std::string& address : list_dir(bus)) {
    const std::string dir = bus + "/" + address;
    if (read_long(dir + "/vendor", 0) != 0x10de) continue;
    if ((read_long(dir + "/class", 0) >> 16) != 0x03) continue;  // display controller
    if (auto device = resolve_pci_device(sysfs_root, dir)) gpus.push_back(*device);
  }
  return gpus;
}

std::vector<PciDevice> find_rdma_nics(const std::string& sysfs_root) {
  std::vector<PciDevice> nics;
  const std::string klass = sysfs_root + "/class/infiniband";
  for (const std::string& name : list_dir(klass)) {
    auto device = resolve_pci_device(sysfs_root, klass + "/" + name + "/device");
    if (!device) continue;
    device->name = name;
    nics.push_back(*device);
  }
  return nics;
}

namespace {

std::vector<std::string> split_list(const std::string& spec) {
  std::vector<std::string> items;
  std::stringstream in(spec);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

NicChoice choose_override(const PciDevice& gpu, const std::vector<PciDevice>& nics,
                          const std::string& spec, int local_rank) {
  const std::vector<std::string> names = split_list(spec);
  if (names.empty()) throw std::invalid_argument("DISSECT_NIC is empty");
  const size_t index = names.size() == 1 ? 0 : static_cast<size_t>(local_rank);
  if (local_rank < 0 || index >= names.size()) {
    throw std::invalid_argument("DISSECT_NIC='" + spec + "' has no entry for local rank " +
                                std::to_string(local_rank));
  }
  for (const PciDevice& nic : nics) {
    if (nic.name == names[index]) return NicChoice{nic.name, pci_distance(gpu, nic), true};
  }
  throw std::invalid_argument("DISSECT_NIC names '" + names[index] +
                              "', which is not under /sys/class/infiniband");
}

}  // namespace

NicChoice select_nic(const PciDevice& gpu, const std::vector<PciDevice>& nics,
                     const std::string& override_spec, int local_rank) {
  if (!override_spec.empty()) return choose_override(gpu, nics, override_spec, local_rank);
  NicChoice best;
  size_t best_shared = 0;
  for (const PciDevice& nic : nics) {  // nics are sorted by name: first wins a full tie
    const PciDistance distance = pci_distance(gpu, nic);
    const size_t shared = shared_prefix(gpu, nic);
    const bool better = best.nic.empty() || distance < best.distance ||
                        (distance == best.distance && shared > best_shared);
    if (better) {
      best = NicChoice{nic.name, distance, false};
      best_shared = shared;
    }
  }
  return best;
}

}  // namespace dissect::doctor
