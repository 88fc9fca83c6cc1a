// `--provider mlx5` in a build without rdma-core: say how to get one, never run elsewhere.
#include "dissect/common/error.h"
#include "softnic_fabric.h"

namespace dissect::bench {

std::unique_ptr<FabricSession> open_mlx5_session(const std::string&, const std::string&, uint8_t) {
  throw InvalidArgument("--provider mlx5: this dissect was built without rdma-core; configure with "
                        "-DDISSECT_WITH_MLX5=ON (libibverbs-dev, rdma-core 44+) and rebuild");
}

}  // namespace dissect::bench
