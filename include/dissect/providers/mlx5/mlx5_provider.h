// The mlx5 provider: a ConnectX NIC through rdma-core, behind the nic layer's interface.
//
// Queue placement (QpAttributes::placement):
//  - host: Route B (docs/mlx5_sources.md §4.6). rdma-core allocates the queues: ibv_create_cq_ex with
//    IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN (the submitter never writes the CQ DBR), mlx5dv_create_qp
//    with MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE (READ/atomic results land in memory, not in the
//    CQE), then mlx5dv_init_obj exposes the rings; with CUDA they are also mapped into the GPU.
//  - gpu: Route A (§4.2). Queues in GPU memory registered as DEVX umems, CREATE_CQ / CREATE_QP and
//    RST2INIT / INIT2RTR / RTR2RTS through DEVX commands. Needs a CUDA build.
// Doorbells: a DEVX UAR (or the QP's bfreg on Route B) mapped into the GPU with
// cudaHostRegisterIoMemory; when that is refused the QP's handle points at a shadow word and a
// DoorbellForwarder thread rings the UAR (doorbell_forwarder.h).
//
// Status: compiled in CI against rdma-core 44; never run on a NIC (docs/hardware.md).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dissect/nic/nic.h"

namespace dissect::mlx5provider {

enum class DoorbellMode { automatic, gpu, cpu_assisted };

struct Mlx5Options {
  std::string device;          // "mlx5_0"; empty = closest to the GPU (DISSECT_NIC honoured)
  int gpu_ordinal = 0;         // the GPU whose PCIe locality picks the device
  int local_rank = 0;          // index into a DISSECT_NIC list
  uint8_t port_num = 1;
  uint8_t gid_index = 0;       // RoCE GID table index (RoCE v2: usually 3 on mlx5 with IPv4)
  DoorbellMode doorbell = DoorbellMode::automatic;
  std::string sysfs_root = "/sys";
};

// Names of the RDMA devices rdma-core sees that the mlx5 provider can drive (mlx5dv_is_supported).
std::vector<std::string> list_mlx5_devices();

// Opens the device; throws VerbsError naming the call and device when it cannot.
std::unique_ptr<nic::Nic> open_mlx5_nic(const Mlx5Options& options);

}  // namespace dissect::mlx5provider
