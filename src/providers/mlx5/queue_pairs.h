// The two kinds of mlx5 queue pair behind nic::QueuePair (mlx5_provider.h explains the routes).
#pragma once

#include <memory>

#include "device.h"
#include "dissect/nic/nic.h"

namespace dissect::mlx5provider {

std::unique_ptr<nic::QueuePair> create_host_qp(std::shared_ptr<Device> device, ibv_pd* pd,
                                               const nic::QpAttributes& attributes);
std::unique_ptr<nic::QueuePair> create_devx_qp(std::shared_ptr<Device> device, ibv_pd* pd,
                                               const nic::QpAttributes& attributes);

std::unique_ptr<Dci> create_devx_dci(std::shared_ptr<Device> device, ibv_pd* pd,
                                     const nic::QpAttributes& attributes);

// The device and verbs PD behind an mlx5 ProtectionDomain; InvalidArgument for another provider's.
struct PdParts {
  std::shared_ptr<Device> device;
  ibv_pd* pd;
};
PdParts mlx5_pd_parts(nic::ProtectionDomain& pd);

// Applies RESET->INIT->RTR->RTS with ibv_modify_qp (verbs-created QPs).
void connect_verbs_qp(ibv_qp* qp, const RcConnectParams& params, const std::string& object);

}  // namespace dissect::mlx5provider
