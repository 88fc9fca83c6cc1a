#include "device.h"

#include <cstdlib>
#include <cstring>

#include "dissect/doctor/pci_topology.h"
#include "dissect/providers/mlx5/error.h"
#include "dissect/providers/mlx5/gpu_memory.h"

namespace dissect::mlx5provider {
namespace {

struct DeviceListDeleter {
  void operator()(ibv_device** list) const { ibv_free_device_list(list); }
};

std::string choose_device_name(const Mlx5Options& options) {
  if (!options.device.empty()) return options.device;
  const auto gpus = doctor::find_gpus(options.sysfs_root);
  const auto nics = doctor::find_rdma_nics(options.sysfs_root);
  const char* env = std::getenv("DISSECT_NIC");
  if (options.gpu_ordinal >= 0 && static_cast<size_t>(options.gpu_ordinal) < gpus.size()) {
    return doctor::select_nic(gpus[options.gpu_ordinal], nics, env ? env : "", options.local_rank)
        .nic;
  }
  if (env && *env) return doctor::select_nic(doctor::PciDevice{}, nics, env, options.local_rank).nic;
  return nics.empty() ? "" : nics.front().name;
}

}  // namespace

std::vector<std::string> list_mlx5_devices() {
  int count = 0;
  std::unique_ptr<ibv_device*, DeviceListDeleter> list(ibv_get_device_list(&count));
  std::vector<std::string> names;
  for (int i = 0; list && i < count; ++i) {
    if (mlx5dv_is_supported(list.get()[i])) names.emplace_back(ibv_get_device_name(list.get()[i]));
  }
  return names;
}

std::shared_ptr<Device> open_device(const Mlx5Options& options) {
  auto device = std::make_shared<Device>();
  device->options = options;
  device->name = choose_device_name(options);
  int count = 0;
  std::unique_ptr<ibv_device*, DeviceListDeleter> list(ibv_get_device_list(&count));
  check_verbs(list != nullptr, "ibv_get_device_list", "host");
  for (int i = 0; i < count; ++i) {
    ibv_device* candidate = list.get()[i];
    if (!device->name.empty() && device->name != ibv_get_device_name(candidate)) continue;
    if (!mlx5dv_is_supported(candidate)) continue;
    device->name = ibv_get_device_name(candidate);
    // DEVX is mandatory: GPU-resident queues and DEVX UARs need it (rdma-core silently drops it
    // otherwise, docs/mlx5_sources.md §4.2: open with MLX5DV_CONTEXT_FLAGS_DEVX).
    mlx5dv_context_attr attr{};
    attr.flags = MLX5DV_CONTEXT_FLAGS_DEVX;
    device->context.reset(mlx5dv_open_device(candidate, &attr));
    check_verbs(device->context != nullptr, "mlx5dv_open_device(DEVX)", device->name);
    break;
  }
  if (!device->context) {
    throw VerbsError("open_mlx5_nic", ENODEV,
                     device->name.empty() ? std::string("no mlx5 device") : device->name);
  }
  const std::string where = device->name + " port " + std::to_string(options.port_num);
  check_verbs_rc(ibv_query_port(device->context.get(), options.port_num, &device->port),
                 "ibv_query_port", where);
  check_verbs_rc(ibv_query_gid(device->context.get(), options.port_num, options.gid_index,
                               &device->gid),
                 "ibv_query_gid", where);
  return device;
}

DoorbellForwarder& Device::doorbell_forwarder() {
  if (!forwarder) forwarder = std::make_unique<DoorbellForwarder>();
  return *forwarder;
}

RcConnectParams Device::connect_params(const nic::QpEndpoint& remote) const {
  RcConnectParams p;
  p.port_num = options.port_num;
  p.path_mtu = static_cast<uint8_t>(port.active_mtu);
  p.remote_qpn = remote.qpn;
  p.link_layer = link_layer();
  p.remote_lid = remote.lid;
  std::memcpy(p.remote_gid, remote.gid, sizeof(p.remote_gid));
  p.sgid_index = options.gid_index;
  // An IB port that demands a GRH (IBV_QPF_GRH_REQUIRED) gets one, as ibv_modify_qp(3) says.
  p.use_grh = (port.flags & IBV_QPF_GRH_REQUIRED) != 0;
  // RoCE v2 packets cross routers: the kernel and perftest use 64 or more; IB inside a subnet 1.
  p.hop_limit = p.link_layer == LinkLayer::ethernet ? 64 : 1;
  return p;
}

nic::QpEndpoint Device::local_endpoint(uint32_t qpn) const {
  nic::QpEndpoint e;
  e.qpn = qpn;
  e.lid = port.lid;
  std::memcpy(e.gid, gid.raw, sizeof(e.gid));
  return e;
}

DoorbellRoute::DoorbellRoute(std::shared_ptr<Device> device, void* uar_register,
                             mlx5::be32* dbrec_send)
    : device_(std::move(device)), uar_register_(uar_register) {
  const DoorbellMode mode = device_->options.doorbell;
  if (mode != DoorbellMode::cpu_assisted && cuda_available()) {
    // 8 bytes: we ring with one 8-byte store and never BlueFlame from the GPU.
    void* mapped = map_io_memory(uar_register, sizeof(uint64_t), &why_);
    if (mapped) {
      submitter_doorbell_ = static_cast<uint64_t*>(mapped);
      submitter_dbrec_ = static_cast<mlx5::be32*>(host_register_mapped(dbrec_send, sizeof(*dbrec_send)));
      return;
    }
    if (mode == DoorbellMode::gpu) {
      throw VerbsError("cudaHostRegister(IoMemory) of the UAR: " + why_, EPERM, device_->name);
    }
  } else if (mode != DoorbellMode::cpu_assisted) {
    why_ = "no CUDA device";
  } else {
    why_ = "requested";
  }
  // CPU-assisted: the submitter writes a shadow doorbell and a scratch DBR; only the forwarder
  // writes the DBR the NIC reads.
  void* page = nullptr;
  check_verbs_rc(posix_memalign(&page, 4096, 4096), "posix_memalign(doorbell shadow)",
                 device_->name);
  std::memset(page, 0, 4096);
  shadow_ = static_cast<uint64_t*>(page);
  void* mapped = host_register_mapped(page, 4096);
  submitter_doorbell_ = static_cast<uint64_t*>(mapped);
  submitter_dbrec_ = reinterpret_cast<mlx5::be32*>(static_cast<uint64_t*>(mapped) + 1);
  device_->doorbell_forwarder().add(
      ForwardedQueue{shadow_, dbrec_send, static_cast<volatile uint64_t*>(uar_register_)});
}

DoorbellRoute::~DoorbellRoute() {
  if (!shadow_) {
    host_unregister(uar_register_);
    return;
  }
  device_->doorbell_forwarder().remove(shadow_);
  host_unregister(shadow_);
  std::free(shadow_);
}

}  // namespace dissect::mlx5provider
