#include "dissect/bench/mlx5_launch.h"

#include "dissect/common/error.h"

namespace dissect::bench {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

bool mpi_launcher(const bootstrap::EnvLookup& env) {
  return env("OMPI_COMM_WORLD_SIZE") || env("PMI_SIZE") || env("PMIX_RANK");
}

}  // namespace

std::string two_rank_launch_hint(const std::string& experiment) {
  return "start two ranks, one per node: `mpirun -np 2 -H node1,node2 dissect " + experiment +
         " --provider mlx5`, or `DISSECT_RANK=<0|1> DISSECT_WORLD_SIZE=2 "
         "DISSECT_BOOTSTRAP=node1:29517 dissect " + experiment +
         " --provider mlx5` on each node (docs/hardware.md)";
}

void check_mlx5_device(const std::vector<std::string>& found, const std::string& wanted,
                       const std::string& flag) {
  if (wanted.empty() && found.empty()) {
    throw InvalidArgument(
        "--provider mlx5 needs an RDMA device, and rdma-core lists no mlx5 device on this host "
        "(/dev/infiniband/uverbs* absent?); `dissect doctor --provider mlx5` says why");
  }
  if (wanted.empty()) return;
  for (const auto& name : found) {
    if (name == wanted) return;
  }
  throw InvalidArgument(flag + " " + wanted + ": no such mlx5 RDMA device on this host (rdma-core "
                        "lists: " + joined(found) + ")");
}

void check_two_rank_launch(const std::string& experiment, const bootstrap::EnvLookup& env,
                           bool mpi_build) {
  if (bootstrap::launch_environment_present(env) && !env("DISSECT_RANK") && mpi_build &&
      mpi_launcher(env)) {
    return;  // the MPI bootstrap will be chosen; its size is checked after MPI_Init
  }
  if (!bootstrap::launch_environment_present(env)) {
    if (mpi_build && mpi_launcher(env)) return;
    throw InvalidArgument("--provider mlx5 runs on two ranks (rank 0 measures, rank 1 is the "
                          "target) and this is a single-rank launch: " +
                          two_rank_launch_hint(experiment));
  }
  const int ranks = bootstrap::read_launch_environment(env).world_size;
  if (ranks != 2) {
    throw InvalidArgument("--provider mlx5 runs on exactly two ranks and this launch has " +
                          std::to_string(ranks) + ": " + two_rank_launch_hint(experiment));
  }
}

}  // namespace dissect::bench
