#include "dissect/bootstrap/devices.h"

#include <cctype>
#include <sstream>
#include <stdexcept>

#include "dissect/bootstrap/environment.h"
#include "dissect/common/error.h"

namespace dissect::bootstrap {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// cudaDeviceGetPCIBusId gives "0000:03:00.0" (sometimes with an 8-digit domain); sysfs uses a
// 4-digit domain.
std::string normalise_pci(const std::string& id) {
  std::string s = lower(id);
  const size_t colon = s.find(':');
  if (colon != std::string::npos && colon > 4) s = s.substr(colon - 4);
  return s;
}

}  // namespace

DeviceSelection select_devices(int local_rank, int visible_gpus, const DeviceOptions& options) {
  if (local_rank < 0) {
    throw InvalidArgument("select_devices: local rank " + std::to_string(local_rank) + " is negative");
  }
  if (visible_gpus < 0) {
    throw InvalidArgument("select_devices: " + std::to_string(visible_gpus) + " visible GPUs");
  }
  DeviceSelection out;
  out.gpu = visible_gpus > 0 ? local_rank % visible_gpus : -1;

  const std::vector<doctor::PciDevice> nics = doctor::find_rdma_nics(options.sysfs_root);
  std::optional<doctor::PciDevice> gpu_device;
  std::string gpu_note;
  if (out.gpu >= 0) {
    const std::vector<doctor::PciDevice> gpus = doctor::find_gpus(options.sysfs_root);
    if (static_cast<size_t>(out.gpu) < options.gpu_pci_bus_ids.size()) {
      const std::string want = normalise_pci(options.gpu_pci_bus_ids[static_cast<size_t>(out.gpu)]);
      for (const auto& g : gpus) {
        if (lower(g.address) == want) gpu_device = g;
      }
      if (!gpu_device) gpu_note = " (PCI " + want + " not found in sysfs)";
    } else if (static_cast<size_t>(out.gpu) < gpus.size()) {
      gpu_device = gpus[static_cast<size_t>(out.gpu)];
      if (process_env("CUDA_VISIBLE_DEVICES")) {
        gpu_note = " (assumed the " + std::to_string(out.gpu) +
                   "th GPU in PCI order; CUDA_VISIBLE_DEVICES may remap it)";
      }
    } else {
      gpu_note = " (not found in sysfs)";
    }
    if (gpu_device) out.gpu_pci = gpu_device->address;
  }

  const std::string override_spec =
      options.nic_override ? *options.nic_override : process_env("DISSECT_NIC").value_or("");
  std::string nic_note;
  if (!override_spec.empty()) {
    try {
      const doctor::NicChoice c =
          doctor::select_nic(gpu_device.value_or(doctor::PciDevice{}), nics, override_spec, local_rank);
      out.nic = c.nic;
      out.nic_overridden = true;
      out.distance = c.distance;
      out.distance_known = gpu_device.has_value();
      nic_note = " (DISSECT_NIC)";
    } catch (const std::invalid_argument& e) {
      throw InvalidArgument(e.what());
    }
  } else if (!nics.empty()) {
    if (gpu_device) {
      const doctor::NicChoice c = doctor::select_nic(*gpu_device, nics, "", local_rank);
      out.nic = c.nic;
      out.distance = c.distance;
      out.distance_known = true;
      nic_note = " (closest to the GPU)";
    } else {
      out.nic = nics[static_cast<size_t>(local_rank) % nics.size()].name;
      nic_note = out.gpu >= 0 ? " (by local rank: the GPU's PCI place is unknown)"
                              : " (by local rank: no GPU)";
    }
  }

  std::ostringstream d;
  d << "local rank " << local_rank << ": ";
  if (out.gpu >= 0) {
    d << "GPU " << out.gpu;
    if (!out.gpu_pci.empty()) d << " (" << out.gpu_pci << ")";
    d << gpu_note;
  } else {
    d << "no GPU";
  }
  d << ", ";
  if (out.nic.empty()) {
    d << "no RDMA NIC (softnic)";
  } else {
    d << "NIC " << out.nic << nic_note;
    if (out.distance_known) d << ", " << doctor::to_string(out.distance);
  }
  out.description = d.str();
  return out;
}

}  // namespace dissect::bootstrap
