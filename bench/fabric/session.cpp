#include <string>
#include <utility>

#include "dissect/bench/experiment.h"
#include "dissect/bench/fabric.h"
#include "dissect/common/error.h"
#include "softnic_fabric.h"

namespace dissect::bench {

FabricSessionBuilder::FabricSessionBuilder(const std::string& provider, const Arguments& arguments)
    : provider_(provider), experiment_(arguments.subcommand()) {
  // Declared for every provider so that --help lists them; the softnic refuses them by name
  // rather than accept a NIC choice it cannot act on.
  device_ = arguments.text("device", "", "mlx5 only: the rdma-core device of this rank (mlx5_X); "
                                         "default: DISSECT_NIC, else the NIC nearest the GPU");
  gid_index_ = static_cast<uint8_t>(arguments.integer(
      "gid-index", 0, 0, 255, "mlx5 only: the port's GID table index (RoCE: a RoCE v2 entry, show_gids; InfiniBand: 0)"));
  if (provider_ == "mlx5") return;
  const std::pair<const char*, std::string> given[] = {{"device", "'" + device_ + "'"},
                                                       {"gid-index", std::to_string(gid_index_)}};
  for (const auto& [name, value] : given) {
    if (arguments.given(name)) {
      throw InvalidArgument(std::string("--") + name + " = " + value + " chooses a port of an mlx5 NIC; --provider " +
                            provider_ + " has no NIC to choose");
    }
  }
}

std::unique_ptr<FabricSession> FabricSessionBuilder::open() const {
  if (provider_ == "softnic") return open_softnic_session();
  if (provider_ == "mlx5") return open_mlx5_session(experiment_, device_, gid_index_);
  throw InvalidArgument("no fabric for provider '" + provider_ + "' (softnic, mlx5)");
}

}  // namespace dissect::bench
