// `--provider mlx5`: two ranks, each on a ConnectX through rdma-core, host-resident queues (Route
// B: verbs QP/CQ exposed with mlx5dv_init_obj) that host threads fill with mini-gda WQEs.
#include <cstdio>

#include "dissect/bench/mlx5_launch.h"
#include "dissect/bench/rank_fabric.h"
#include "dissect/bootstrap/devices.h"
#include "dissect/bootstrap/peer_info.h"
#include "dissect/common/error.h"
#include "dissect/doctor/pci_topology.h"
#include "dissect/providers/mlx5/mlx5_provider.h"
#include "softnic_fabric.h"

namespace dissect::bench {
namespace {

// Host submitters ring through the provider's doorbell forwarder: the UAR is write-combining
// memory, and mini-gda's host ordering policy has no WC flush, so a host thread that writes the
// DBR, fences and rings the UAR for them is the route that is correct today (device.cpp).
constexpr const char* kNicModel =
    "ConnectX through rdma-core: host-resident queues, CPU-assisted doorbells";

// This rank's NIC: --device, else DISSECT_NIC or the one closest to this local rank's GPU.
std::string choose_device(const std::string& wanted, int local_rank) {
  if (!wanted.empty()) return wanted;
  const size_t gpus = doctor::find_gpus("/sys").size();
  const bootstrap::DeviceSelection s =
      bootstrap::select_devices(local_rank, static_cast<int>(gpus));
  if (s.nic.empty()) {
    throw InvalidArgument("local rank " + std::to_string(local_rank) +
                          ": no RDMA NIC under /sys/class/infiniband to choose from; pass --device");
  }
  return s.nic;
}

class Mlx5Session : public FabricSession {
 public:
  Mlx5Session(const std::string& experiment, const std::string& device, uint8_t gid_index)
      : gid_index_(gid_index) {
    check_mlx5_device(mlx5provider::list_mlx5_devices(), device);
    check_two_rank_launch(experiment, bootstrap::process_env, bootstrap::have_mpi());
    bootstrap_ = bootstrap::create_bootstrap();
    if (bootstrap_->world_size() != 2) {
      throw InvalidArgument("--provider mlx5 runs on exactly two ranks and this launch has " +
                            std::to_string(bootstrap_->world_size()) + ": " +
                            two_rank_launch_hint(experiment));
    }
    device_ = choose_device(device, bootstrap_->local_rank());
  }

  std::unique_ptr<Fabric> connect(const FabricConfig& config) override {
    const NicOpener open = [this] {
      mlx5provider::Mlx5Options o;
      o.device = device_;
      o.gid_index = gid_index_;
      o.doorbell = mlx5provider::DoorbellMode::cpu_assisted;
      return mlx5provider::open_mlx5_nic(o);
    };
    return std::make_unique<RankFabric>(*bootstrap_, open, device_, config,
                                        RankFabricLabels{"mlx5", kNicModel, "ConnectX"});
  }
  bool measures() const override { return bootstrap_->rank() == 0; }
  std::string served_line(const std::string& experiment) const override {
    return "dissect " + experiment + ": rank " + std::to_string(bootstrap_->rank()) + " (" +
           device_ + " on " + bootstrap::host_name() +
           ") served as the target; rank 0 prints the results";
  }

 private:
  uint8_t gid_index_;
  std::unique_ptr<bootstrap::Bootstrap> bootstrap_;
  std::string device_;
};

}  // namespace

std::unique_ptr<FabricSession> open_mlx5_session(const std::string& experiment,
                                                 const std::string& device, uint8_t gid_index) {
  return std::make_unique<Mlx5Session>(experiment, device, gid_index);
}

}  // namespace dissect::bench
