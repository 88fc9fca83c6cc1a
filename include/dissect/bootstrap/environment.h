// One PE per process, launched by environment variables; rendezvous over TCP.
//
// Variables (read by read_launch_environment):
//   DISSECT_RANK, DISSECT_WORLD_SIZE   this PE's rank and the number of PEs (both or neither);
//   DISSECT_LOCAL_RANK                 optional: index among the PEs of this node. Without it the
//                                      bootstrap numbers the PEs of each host (by host name) in
//                                      rank order;
//   DISSECT_BOOTSTRAP=<host>:<port>    where rank 0 listens and the others connect (IPv6 as
//                                      [addr]:port). Without it: 127.0.0.1:<DISSECT_BOOTSTRAP_PORT
//                                      or 29517>, which only works on one node;
//   DISSECT_BOOTSTRAP_TIMEOUT          seconds every wait may take (default 120).
// Without DISSECT_RANK, the rank numbers come from Open MPI (OMPI_COMM_WORLD_RANK / _SIZE /
// _LOCAL_RANK) or Slurm (SLURM_PROCID / SLURM_NTASKS / SLURM_LOCALID); DISSECT_BOOTSTRAP still
// gives the rendezvous, and is required when those variables say the PEs span several nodes.
//
// Protocol: rank 0 accepts world_size - 1 connections; each peer connects (retrying until the
// timeout while rank 0 is not listening yet) and sends a hello with its rank, world size and host.
// Rank 0 checks them (duplicate rank, wrong world size, bad protocol version), computes local
// ranks and answers each with a welcome. Collectives go through rank 0 as length-prefixed frames
// {magic, op, sequence, length, payload}; a frame of another op or sequence than expected is an
// error naming both. When rank 0 fails (a peer missing, timed out or gone), it sends every
// connected peer an abort frame carrying its error text, so they fail with the same message.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "dissect/bootstrap/bootstrap.h"

namespace dissect::bootstrap {

inline constexpr int DEFAULT_BOOTSTRAP_PORT = 29517;
inline constexpr double DEFAULT_BOOTSTRAP_TIMEOUT_S = 120;

// Where the rank numbers came from.
enum class RankSource { dissect, open_mpi, slurm };
const char* to_string(RankSource source);

struct LaunchEnvironment {
  RankSource source = RankSource::dissect;
  int rank = 0;
  int world_size = 1;
  int local_rank = -1;       // -1 = not given: computed from host names at rendezvous
  std::string host = "127.0.0.1";
  int port = DEFAULT_BOOTSTRAP_PORT;
  bool address_given = false;  // DISSECT_BOOTSTRAP was set
  double timeout_s = DEFAULT_BOOTSTRAP_TIMEOUT_S;
};

// Looks a variable up; nullopt when unset. The default reads the process environment.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
std::optional<std::string> process_env(const std::string& name);

// True when DISSECT_RANK, OMPI_COMM_WORLD_RANK or SLURM_PROCID is set.
bool launch_environment_present(const EnvLookup& env = process_env);

// Parses the variables above. Throws InvalidArgument naming the variable and its value: a rank
// that is not an integer or not in [0, world size), a world size < 1, DISSECT_RANK without
// DISSECT_WORLD_SIZE, an address without a port or with a port outside 1..65535, a timeout that
// is not a positive number, or several nodes without DISSECT_BOOTSTRAP. Throws InvalidArgument
// when none of the rank variables is set.
LaunchEnvironment read_launch_environment(const EnvLookup& env = process_env);

class Environment : public Bootstrap {
 public:
  // Connects the group (rank 0 listens, the others connect); returns when every PE has arrived.
  // `host_id` names this node for local-rank numbering (default: host_name()).
  explicit Environment(const LaunchEnvironment& launch, std::string host_id = "");
  ~Environment() override;
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

  int rank() const override;
  int world_size() const override;
  int local_rank() const override;
  int local_size() const override;
  std::string kind() const override { return "environment"; }
  std::string describe() const override;

  std::vector<uint8_t> allgather(const void* data, size_t bytes) override;
  void barrier() override;
  void broadcast(void* data, size_t bytes, int root) override;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace dissect::bootstrap
