#include "dissect/nic/nic.h"

#include <string>

#include "dissect/common/error.h"
#include "dissect/mlx5/ring.h"

namespace dissect::nic {

const char* to_string(Placement placement) {
  return placement == Placement::gpu ? "gpu" : "host";
}

Placement placement_from_string(const std::string& name) {
  if (name == "host") return Placement::host;
  if (name == "gpu") return Placement::gpu;
  throw InvalidArgument("unknown queue placement '" + name + "' (expected host or gpu)");
}

const char* to_string(DoorbellPath path) {
  return path == DoorbellPath::cpu_assisted ? "cpu-assisted" : "direct";
}

DoorbellPath doorbell_path_from_string(const std::string& name) {
  if (name == "direct") return DoorbellPath::direct;
  if (name == "cpu-assisted") return DoorbellPath::cpu_assisted;
  throw InvalidArgument("unknown doorbell path '" + name + "' (expected direct or cpu-assisted)");
}

std::unique_ptr<DcTarget> ProtectionDomain::create_dct(const DctAttributes&) {
  throw Error("create_dct: this provider does not implement DC transport (the softnic does)");
}

std::unique_ptr<QueuePair> ProtectionDomain::create_dci(const QpAttributes&) {
  throw Error("create_dci: this provider does not implement DC transport (the softnic does)");
}

std::unique_ptr<CompletionQueue> Nic::create_cq(const CqAttributes&) {
  throw Error("create_cq: provider '" + provider() +
              "' does not implement CQs shared between QPs (the softnic does)");
}

void check_queue_depth(const char* what, uint64_t depth, uint64_t limit) {
  if (!mlx5::is_power_of_two(depth) || depth > limit) {
    throw InvalidArgument(std::string(what) + " = " + std::to_string(depth) +
                          ": must be a power of two in [1, " + std::to_string(limit) + "]");
  }
}

}  // namespace dissect::nic
