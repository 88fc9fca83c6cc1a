// Sessions behind FabricSessionBuilder, one per provider (fabric.h).
#pragma once

#include <memory>
#include <string>

#include "dissect/bench/fabric.h"

namespace dissect::bench {

std::unique_ptr<FabricSession> open_softnic_session();

// mlx5: checks the launch (a device, two ranks), creates the bootstrap, picks this rank's NIC.
// Throws InvalidArgument with one line saying what is missing; in a build without rdma-core,
// InvalidArgument saying how to build it.
std::unique_ptr<FabricSession> open_mlx5_session(const std::string& experiment,
                                                 const std::string& device, uint8_t gid_index);

}  // namespace dissect::bench
