// What `--provider mlx5` checks before it opens anything or waits for a peer, so that a launch
// that cannot work fails at once with one line saying what is missing and what to do.
#pragma once

#include <string>
#include <vector>

#include "dissect/bootstrap/environment.h"

namespace dissect::bench {

// `found`: the mlx5 devices rdma-core lists; `wanted`: the flag `flag`'s value (--device; moe's
// is --nic, its --device being the GPU), empty for "any". Throws InvalidArgument naming the flag
// and the missing device (or saying there is none) and what was found.
void check_mlx5_device(const std::vector<std::string>& found, const std::string& wanted,
                       const std::string& flag = "--device");

// Throws InvalidArgument with the two-rank launch commands for `experiment` when the launch
// variables say one rank (or none), or a world size other than 2. Under an MPI launcher in a build
// with MPI the world size is known only after MPI_Init: it passes, and the session checks again.
void check_two_rank_launch(const std::string& experiment, const bootstrap::EnvLookup& env,
                           bool mpi_build);

// The one-line hint both checks above and the session end with.
std::string two_rank_launch_hint(const std::string& experiment);

}  // namespace dissect::bench
