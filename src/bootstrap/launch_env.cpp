// Reading the launch variables: DISSECT_*, then Open MPI's, then Slurm's.
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "dissect/bootstrap/environment.h"

namespace dissect::bootstrap {

const char* to_string(RankSource source) {
  switch (source) {
    case RankSource::dissect: return "DISSECT_RANK";
    case RankSource::open_mpi: return "Open MPI (OMPI_COMM_WORLD_RANK)";
    case RankSource::slurm: return "Slurm (SLURM_PROCID)";
  }
  return "?";
}

std::optional<std::string> process_env(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (!value) return std::nullopt;
  return std::string(value);
}

namespace {

std::string quoted(const std::string& name, const std::string& value) {
  return name + "='" + value + "'";
}

long parse_integer(const std::string& name, const std::string& value) {
  errno = 0;
  char* end = nullptr;
  const long v = value.empty() ? 0 : std::strtol(value.c_str(), &end, 10);
  if (value.empty() || end != value.c_str() + value.size() || errno == ERANGE ||
      !(std::isdigit(static_cast<unsigned char>(value[0])) || value[0] == '-')) {
    throw InvalidArgument(quoted(name, value) + " is not an integer");
  }
  return v;
}

struct Names {
  const char* rank;
  const char* size;
  const char* local;
};

int read_int(const EnvLookup& env, const char* name, long lo, long hi, const std::string& range) {
  const std::string value = *env(name);
  const long v = parse_integer(name, value);
  if (v < lo || v > hi) throw InvalidArgument(quoted(name, value) + " is out of range " + range);
  return static_cast<int>(v);
}

void parse_address(const std::string& value, LaunchEnvironment& out) {
  const std::string name = "DISSECT_BOOTSTRAP";
  std::string host;
  std::string port;
  if (!value.empty() && value[0] == '[') {  // [IPv6]:port
    const size_t close = value.find(']');
    if (close == std::string::npos || close + 1 >= value.size() || value[close + 1] != ':') {
      throw InvalidArgument(quoted(name, value) + " is not [<IPv6 address>]:<port>");
    }
    host = value.substr(1, close - 1);
    port = value.substr(close + 2);
  } else {
    const size_t colon = value.rfind(':');
    if (colon == std::string::npos || value.find(':') != colon) {
      throw InvalidArgument(quoted(name, value) + " is not <host>:<port> (e.g. node1:29517)");
    }
    host = value.substr(0, colon);
    port = value.substr(colon + 1);
  }
  if (host.empty()) throw InvalidArgument(quoted(name, value) + " has no host before the port");
  long p = 0;
  try {
    p = parse_integer(name + " port", port);
  } catch (const InvalidArgument&) {
    throw InvalidArgument(quoted(name, value) + ": port '" + port + "' is not an integer");
  }
  if (p < 1 || p > 65535) {
    throw InvalidArgument(quoted(name, value) + ": port " + port + " is not in 1..65535");
  }
  out.host = host;
  out.port = static_cast<int>(p);
  out.address_given = true;
}

}  // namespace

bool launch_environment_present(const EnvLookup& env) {
  return env("DISSECT_RANK") || env("OMPI_COMM_WORLD_RANK") || env("SLURM_PROCID");
}

LaunchEnvironment read_launch_environment(const EnvLookup& env) {
  LaunchEnvironment out;
  Names names{};
  bool multi_node = false;
  std::string nodes_hint;
  if (env("DISSECT_RANK")) {
    out.source = RankSource::dissect;
    names = {"DISSECT_RANK", "DISSECT_WORLD_SIZE", "DISSECT_LOCAL_RANK"};
  } else if (env("DISSECT_WORLD_SIZE")) {
    throw InvalidArgument(quoted("DISSECT_WORLD_SIZE", *env("DISSECT_WORLD_SIZE")) +
                          " is set but DISSECT_RANK is not: set both");
  } else if (env("OMPI_COMM_WORLD_RANK")) {
    out.source = RankSource::open_mpi;
    names = {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"};
  } else if (env("SLURM_PROCID")) {
    out.source = RankSource::slurm;
    names = {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"};
  } else {
    throw InvalidArgument(
        "no launch variables: set DISSECT_RANK and DISSECT_WORLD_SIZE (and DISSECT_BOOTSTRAP="
        "<host>:<port> of rank 0), or launch with mpirun or srun");
  }

  if (!env(names.size)) {
    throw InvalidArgument(quoted(names.rank, *env(names.rank)) + " is set but " + names.size +
                          " is not: set both");
  }
  out.world_size = read_int(env, names.size, 1, 65536, "1..65536");
  const std::string rank_text = *env(names.rank);
  const long rank = parse_integer(names.rank, rank_text);
  if (rank < 0 || rank >= out.world_size) {
    throw InvalidArgument(quoted(names.rank, rank_text) + " is out of range for " +
                          quoted(names.size, *env(names.size)) + " (0.." +
                          std::to_string(out.world_size - 1) + ")");
  }
  out.rank = static_cast<int>(rank);
  if (env(names.local)) {
    out.local_rank = read_int(env, names.local, 0, out.world_size - 1,
                              "0.." + std::to_string(out.world_size - 1) + " (below " +
                                  names.size + ")");
  }

  if (out.source == RankSource::open_mpi && env("OMPI_COMM_WORLD_LOCAL_SIZE")) {
    const int local_size = read_int(env, "OMPI_COMM_WORLD_LOCAL_SIZE", 1, out.world_size,
                                    "1.." + std::to_string(out.world_size));
    multi_node = local_size < out.world_size;
    nodes_hint = "OMPI_COMM_WORLD_LOCAL_SIZE=" + std::to_string(local_size) + " < " +
                 names.size + "=" + std::to_string(out.world_size);
  }
  if (out.source == RankSource::slurm) {
    for (const char* n : {"SLURM_STEP_NUM_NODES", "SLURM_NNODES"}) {
      if (!env(n)) continue;
      const int nodes = read_int(env, n, 1, 1 << 20, "1..");
      multi_node = nodes > 1;
      nodes_hint = std::string(n) + "=" + std::to_string(nodes);
      break;
    }
  }

  if (const auto address = env("DISSECT_BOOTSTRAP")) {
    parse_address(*address, out);
  } else if (const auto port = env("DISSECT_BOOTSTRAP_PORT")) {
    out.port = read_int(env, "DISSECT_BOOTSTRAP_PORT", 1, 65535, "1..65535");
  }
  if (multi_node && !out.address_given) {
    throw InvalidArgument("the PEs span several nodes (" + nodes_hint +
                          ") but DISSECT_BOOTSTRAP is not set: set DISSECT_BOOTSTRAP=<host of "
                          "rank 0>:<port> on every rank");
  }

  if (const auto timeout = env("DISSECT_BOOTSTRAP_TIMEOUT")) {
    errno = 0;
    char* end = nullptr;
    const double t = std::strtod(timeout->c_str(), &end);
    if (timeout->empty() || end != timeout->c_str() + timeout->size() || errno == ERANGE ||
        !std::isfinite(t) || !(t > 0)) {
      throw InvalidArgument(quoted("DISSECT_BOOTSTRAP_TIMEOUT", *timeout) +
                            " is not a positive number of seconds");
    }
    out.timeout_s = t;
  }
  return out;
}

}  // namespace dissect::bootstrap
