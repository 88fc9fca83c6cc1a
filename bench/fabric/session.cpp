#include "dissect/bench/experiment.h"
#include "dissect/bench/fabric.h"
#include "dissect/common/error.h"
#include "softnic_fabric.h"

namespace dissect::bench {

FabricSessionBuilder::FabricSessionBuilder(const std::string& provider, const Arguments& arguments)
    : provider_(provider), experiment_(arguments.subcommand()) {
  if (provider_ != "mlx5") return;  // the softnic takes no fabric flags
  device_ = arguments.text("device", "");
  gid_index_ = static_cast<uint8_t>(arguments.integer("gid-index", 0, 0, 255));
}

std::unique_ptr<FabricSession> FabricSessionBuilder::open() const {
  if (provider_ == "softnic") return open_softnic_session();
  if (provider_ == "mlx5") return open_mlx5_session(experiment_, device_, gid_index_);
  throw InvalidArgument("no fabric for provider '" + provider_ + "' (softnic, mlx5)");
}

}  // namespace dissect::bench
