#include "moe_provider.h"

#include <string>
#include <utility>
#include <vector>

#include "dissect/bench/mlx5_launch.h"
#include "dissect/bootstrap/devices.h"
#include "dissect/common/error.h"
#if defined(DISSECT_HAVE_MLX5)
#include "dissect/providers/mlx5/mlx5_provider.h"
#endif

namespace dissect::bench::moe_provider {
namespace {

std::string launch_hint(uint32_t ranks) {
  const std::string n = std::to_string(ranks);
  return "launch " + n + " processes, one rank each: `mpirun -np " + n + " --map-by ppr:<GPUs per node>:node "
         "-H node1,node2 dissect moe --provider mlx5`, or `DISSECT_RANK=<r> DISSECT_WORLD_SIZE=" + n +
         " DISSECT_BOOTSTRAP=node1:29517 dissect moe --provider mlx5` per rank (docs/moe.md)";
}

}  // namespace

void parse(const Arguments& a, bool processes, gpu::GpuMoeOptions& rig) {
  rig.provider = a.provider({"softnic", "mlx5"});
  rig.mlx5.nic = a.text("nic", "", "mlx5 only: this process's rdma-core device (mlx5_X); default: DISSECT_NIC, "
                                   "else the NIC nearest the rank's GPU (--device is the GPU here)");
  rig.mlx5.gid_index = static_cast<uint8_t>(a.integer(
      "gid-index", 0, 0, 255, "mlx5 only: the port's GID table index (RoCE: a RoCE v2 entry, show_gids; InfiniBand: 0)"));
  const std::string doorbell = a.choice("doorbell", "direct", {"direct", "cpu-assisted"},
                                        "mlx5 only: who rings the UAR: the GPU warp (the UAR mapped into the GPU), "
                                        "or the provider's host thread it hands the doorbell to");
  rig.mlx5.cpu_assisted = doorbell == "cpu-assisted";
  if (rig.provider == "softnic") {
    const std::pair<const char*, std::string> mlx5_only[] = {
        {"nic", "'" + rig.mlx5.nic + "'"}, {"gid-index", std::to_string(rig.mlx5.gid_index)}, {"doorbell", doorbell}};
    for (const auto& [name, value] : mlx5_only) {
      if (a.given(name)) {
        throw InvalidArgument(std::string("--") + name + " = " + value +
                              " is a knob of an mlx5 NIC; --provider softnic has no NIC to apply it to");
      }
    }
    return;
  }
  if (!processes) {
    throw InvalidArgument("--provider mlx5: dissect moe runs one rank per process on mlx5, each process on a "
                          "ConnectX of its own, and this is one process that would hold all " +
                          std::to_string(rig.shape.ranks) + " ranks (--ranks " + std::to_string(rig.shape.ranks) +
                          "): ranks sharing one HCA through loopback are not built; " + launch_hint(rig.shape.ranks));
  }
  if (rig.transport != gpu::MoeTransportKind::mini_gda) {
    throw InvalidArgument(std::string("--transport ") + gpu::to_string(rig.transport) +
                          " with --provider mlx5: mini-proxy's workers run on the softnic only (no proxy "
                          "experiment drives mlx5: gpu-proxy-*, proxy-rate take --provider softnic); use "
                          "--transport mini-gda");
  }
  const std::pair<const char*, std::string> softnic_only[] = {
      {"engine-ctas", std::to_string(rig.engine_ctas)},
      {"engine-warps", std::to_string(rig.engine_warps_per_cta)},
      {"nic-profile", rig.nic_profile}};
  for (const auto& [name, value] : softnic_only) {
    if (a.given(name)) {
      throw InvalidArgument(std::string("--") + name + " = " + value +
                            " is a knob of the softnic model; --provider mlx5 runs on a ConnectX, which has no "
                            "engine or timing profile to set");
    }
  }
}

void check_host(const gpu::GpuMoeOptions& rig) {
  if (rig.provider != "mlx5") return;
#if defined(DISSECT_HAVE_MLX5)
  check_mlx5_device(mlx5provider::list_mlx5_devices(), rig.mlx5.nic, "--nic");
#else
  throw InvalidArgument("--provider mlx5: this dissect was built without rdma-core; configure with "
                        "-DDISSECT_WITH_MLX5=ON (libibverbs-dev, rdma-core 44+) and rebuild");
#endif
}

void choose_nic(gpu::GpuMoeOptions& rig, int local_rank, int devices) {
  if (rig.provider != "mlx5" || !rig.mlx5.nic.empty()) return;
  const bootstrap::DeviceSelection s = bootstrap::select_devices(local_rank, devices);
  if (s.nic.empty()) {
    throw InvalidArgument("moe --provider mlx5, local rank " + std::to_string(local_rank) +
                          ": no RDMA NIC under /sys/class/infiniband to choose from; pass --nic mlx5_X");
  }
  rig.mlx5.nic = s.nic;
}

}  // namespace dissect::bench::moe_provider
