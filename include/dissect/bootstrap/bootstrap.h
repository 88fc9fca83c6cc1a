// The bootstrap layer: how processing elements (PEs) find each other and exchange, out of band,
// what RDMA needs before the first put: QP numbers, LIDs/GIDs, rkeys and buffer addresses.
//
// Contract
//  - A `Bootstrap` is one PE's view of a group of `world_size()` PEs numbered 0..world_size-1.
//    PEs on one node are also numbered 0..local_size-1 by `local_rank()`; the local rank picks the
//    GPU and the NIC (devices.h).
//  - allgather, barrier and broadcast are collectives: every PE of the group calls them in the same
//    order with the same sizes. A PE that calls a different collective, or passes a different size,
//    gets an Error that names both. They are slow-path calls (setup and teardown), never on a hot
//    path; one PE object is used by one thread at a time.
//  - Every wait is bounded: an implementation that can time out (in-process, environment) throws
//    BootstrapTimeout naming the PE that waits, the PE(s) it waited for and what for. MPI cannot:
//    there the launcher's own timeouts apply.
//  - Errors are `dissect::Error` subclasses; bad launch variables are `InvalidArgument` and name
//    the variable and its value.
//
// Implementations
//  - InProcess (in_process.h): several PEs in one process, one thread each (two PEs on one GPU, or
//    one PE per GPU of one process). Exchanges through shared memory and a condition variable.
//  - Environment (environment.h): one PE per process; ranks from DISSECT_RANK/DISSECT_WORLD_SIZE (or
//    Open MPI's / Slurm's variables); rank 0 listens on DISSECT_BOOTSTRAP=<host>:<port> over TCP.
//  - Mpi (mpi.h): one PE per process under mpirun/srun, built when CMake finds MPI.
// `create_bootstrap()` picks one from the environment of the process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "dissect/common/error.h"

namespace dissect::bootstrap {

// A collective did not complete in time. what() names who waited, for whom and for what.
class BootstrapTimeout : public Error {
 public:
  using Error::Error;
};

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;

  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  virtual int local_rank() const = 0;  // index among the PEs of this node (0..local_size-1)
  virtual int local_size() const = 0;  // PEs on this node
  virtual std::string kind() const = 0;  // "in-process", "environment" or "mpi"
  // One line for reports: kind, rank/world, local rank/size and the rendezvous.
  virtual std::string describe() const;

  // Every PE contributes `bytes` bytes (the same count on every PE); every PE receives
  // world_size * bytes bytes, PE 0's contribution first.
  virtual std::vector<uint8_t> allgather(const void* data, size_t bytes) = 0;
  // Returns once every PE has entered the barrier.
  virtual void barrier() = 0;
  // `bytes` bytes at `data` on PE `root` are copied to `data` on every other PE.
  virtual void broadcast(void* data, size_t bytes, int root) = 0;
};

// Typed helpers over the byte collectives, for plain structs (PeerInfo, nic::QpEndpoint, ...).
template <class T>
std::vector<T> allgather_value(Bootstrap& bootstrap, const T& value) {
  static_assert(std::is_trivially_copyable_v<T>, "allgather_value exchanges raw bytes");
  const std::vector<uint8_t> bytes = bootstrap.allgather(&value, sizeof(T));
  std::vector<T> out(static_cast<size_t>(bootstrap.world_size()));
  for (size_t i = 0; i < out.size(); ++i) {
    std::memcpy(static_cast<void*>(&out[i]), bytes.data() + i * sizeof(T), sizeof(T));
  }
  return out;
}

template <class T>
void broadcast_value(Bootstrap& bootstrap, T& value, int root) {
  static_assert(std::is_trivially_copyable_v<T>, "broadcast_value exchanges raw bytes");
  bootstrap.broadcast(&value, sizeof(T), root);
}

enum class BootstrapKind { automatic, in_process, environment, mpi };
const char* to_string(BootstrapKind kind);
BootstrapKind bootstrap_kind_from_string(const std::string& name);  // throws InvalidArgument

struct BootstrapOptions {
  BootstrapKind kind = BootstrapKind::automatic;
  // Bound on every wait of the environment bootstrap, seconds; <= 0 reads
  // DISSECT_BOOTSTRAP_TIMEOUT, else 120.
  double timeout_s = 0;
};

// True when this binary was built with the MPI bootstrap (CMake found MPI).
bool have_mpi();

// Picks the bootstrap for this process (kind == automatic):
//  1. DISSECT_RANK is set: Environment (the user asked for it explicitly, even under mpirun);
//  2. built with MPI and launched by an MPI launcher (OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK
//     set): Mpi;
//  3. OMPI_COMM_WORLD_RANK or SLURM_PROCID set: Environment with those rank numbers, rendezvous at
//     DISSECT_BOOTSTRAP (default 127.0.0.1:<DISSECT_BOOTSTRAP_PORT or 29517>, one node only);
//  4. otherwise a single PE (an in-process group of one).
// Throws InvalidArgument naming the variable and value when a launch variable is malformed, and
// Error when `kind` asks for MPI in a build without it.
std::unique_ptr<Bootstrap> create_bootstrap(const BootstrapOptions& options = {});

}  // namespace dissect::bootstrap
