// State shared by the mlx5 provider's objects: the open device, its port, the doorbell forwarder.
#pragma once

#include <memory>
#include <string>

#include "dissect/providers/mlx5/dc.h"
#include "dissect/providers/mlx5/doorbell_forwarder.h"
#include "dissect/providers/mlx5/mlx5_provider.h"
#include "dissect/providers/mlx5/rc_connect.h"
#include "dissect/providers/mlx5/verbs_raii.h"

namespace dissect::mlx5provider {

struct Device {
  std::string name;
  Mlx5Options options;
  ContextPtr context;
  ibv_port_attr port{};
  ibv_gid gid{};
  std::unique_ptr<DoorbellForwarder> forwarder;  // started on first CPU-assisted QP

  LinkLayer link_layer() const {
    return port.link_layer == IBV_LINK_LAYER_ETHERNET ? LinkLayer::ethernet : LinkLayer::infiniband;
  }
  DoorbellForwarder& doorbell_forwarder();
  // Local half of RcConnectParams: port, MTU, GID index; the remote half comes from `remote`.
  RcConnectParams connect_params(const nic::QpEndpoint& remote) const;
  nic::QpEndpoint local_endpoint(uint32_t qpn) const;
  // A DCI's local path (no remote half: dc_commands.h).
  DciConnectParams dci_params() const;
  // What a peer needs to reach DCT `dctn` on this port.
  DcTarget local_dc_target(uint32_t dctn, uint64_t dc_key) const;
};

// The AV a DCI on `device` puts in each WQE towards `target`; on RoCE the next hop's MAC and the
// UDP source port come from an address handle, as the RC path reads them (dc.cpp).
mlx5::mlx5_wqe_av route_to(const Device& device, const DcTarget& target);

std::shared_ptr<Device> open_device(const Mlx5Options& options);

// The doorbell a submitter stores to: the UAR register mapped into the GPU, or (CPU-assisted) a
// shadow word in mapped host memory that the forwarder watches. Owns the shadow and the mapping.
class DoorbellRoute {
 public:
  DoorbellRoute(std::shared_ptr<Device> device, void* uar_register, mlx5::be32* dbrec_send);
  ~DoorbellRoute();
  DoorbellRoute(const DoorbellRoute&) = delete;
  DoorbellRoute& operator=(const DoorbellRoute&) = delete;

  uint64_t* submitter_doorbell() const { return submitter_doorbell_; }
  mlx5::be32* submitter_dbrec() const { return submitter_dbrec_; }
  bool cpu_assisted() const { return shadow_ != nullptr; }
  const std::string& why_cpu_assisted() const { return why_; }

 private:
  std::shared_ptr<Device> device_;
  void* uar_register_;
  uint64_t* submitter_doorbell_ = nullptr;
  mlx5::be32* submitter_dbrec_ = nullptr;
  uint64_t* shadow_ = nullptr;  // host page: [0] doorbell value, [1] scratch DBR
  std::string why_;
};

}  // namespace dissect::mlx5provider
