#include "dissect/bootstrap/bootstrap.h"

#include <sstream>

#include "dissect/bootstrap/environment.h"
#include "dissect/bootstrap/in_process.h"
#include "dissect/bootstrap/mpi.h"

namespace dissect::bootstrap {

std::string Bootstrap::describe() const {
  std::ostringstream out;
  out << kind() << ": rank " << rank() << " of " << world_size() << " (local " << local_rank()
      << " of " << local_size() << ")";
  return out.str();
}

const char* to_string(BootstrapKind kind) {
  switch (kind) {
    case BootstrapKind::automatic: return "auto";
    case BootstrapKind::in_process: return "in-process";
    case BootstrapKind::environment: return "environment";
    case BootstrapKind::mpi: return "mpi";
  }
  return "?";
}

BootstrapKind bootstrap_kind_from_string(const std::string& name) {
  for (BootstrapKind k : {BootstrapKind::automatic, BootstrapKind::in_process,
                          BootstrapKind::environment, BootstrapKind::mpi}) {
    if (name == to_string(k)) return k;
  }
  throw InvalidArgument("bootstrap '" + name + "' is not one of auto, in-process, environment, mpi");
}

namespace {

std::unique_ptr<Bootstrap> make_environment(const BootstrapOptions& options) {
  LaunchEnvironment launch = read_launch_environment();
  if (options.timeout_s > 0) launch.timeout_s = options.timeout_s;
  return std::make_unique<Environment>(launch);
}

std::unique_ptr<Bootstrap> make_single(const BootstrapOptions& options) {
  auto pes = InProcessGroup::create(1, options.timeout_s > 0 ? options.timeout_s
                                                             : DEFAULT_BOOTSTRAP_TIMEOUT_S);
  return std::move(pes[0]);
}

}  // namespace

std::unique_ptr<Bootstrap> create_bootstrap(const BootstrapOptions& options) {
  switch (options.kind) {
    case BootstrapKind::in_process: return make_single(options);
    case BootstrapKind::environment: return make_environment(options);
    case BootstrapKind::mpi: return create_mpi_bootstrap();
    case BootstrapKind::automatic: break;
  }
  if (process_env("DISSECT_RANK")) return make_environment(options);
  if (have_mpi() && launched_by_mpi()) return create_mpi_bootstrap();
  if (launch_environment_present()) return make_environment(options);
  return make_single(options);
}

}  // namespace dissect::bootstrap
