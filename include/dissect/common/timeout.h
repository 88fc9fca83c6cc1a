// The one message every bounded wait prints when it gives up: which object (a QP, a ring), which
// index it waited for, and how far the counter got. On the device it then traps, as DeepEP's
// timeout_while does: a kernel that lost a completion cannot make progress, and a trap surfaces
// the fault at the launch instead of a hang. On the host the caller returns its timeout status.
#pragma once

#include <cstdint>
#include <cstdio>

#include "dissect/common/device.h"
#include "dissect/common/status.h"

namespace dissect {

// What a bounded wait waits on: a QP (its number prints in hex, as rdma-core's tools print it) or
// a proxy ring (its id in decimal, its index a descriptor index).
enum class WaitOn { qp, ring };

DISSECT_HD inline DISSECT_COLD void report_wait_timeout(const char* what, WaitOn on, uint32_t id,
                                                        uint64_t wanted, uint64_t reached,
                                                        uint64_t waited_ns) {
  const bool hex_id = on == WaitOn::qp;
  const char* object = on == WaitOn::qp ? "QP" : "ring";
  const char* index_name = on == WaitOn::qp ? "index" : "descriptor index";
  const auto ns = static_cast<unsigned long long>(waited_ns);
  const auto want = static_cast<unsigned long long>(wanted);
  const auto got = static_cast<unsigned long long>(reached);
#if defined(__CUDA_ARCH__)
  if (hex_id) {
    printf("dissect: timed out after %llu ns waiting for %s on %s 0x%x: %s %llu, reached %llu\n",
           ns, what, object, id, index_name, want, got);
  } else {
    printf("dissect: timed out after %llu ns waiting for %s on %s %u: %s %llu, reached %llu\n", ns,
           what, object, id, index_name, want, got);
  }
  __trap();
#else
  std::fprintf(stderr,
               hex_id ? "dissect: timed out after %llu ns waiting for %s on %s 0x%x: %s %llu, "
                        "reached %llu\n"
                      : "dissect: timed out after %llu ns waiting for %s on %s %u: %s %llu, "
                        "reached %llu\n",
               ns, what, object, id, index_name, want, got);
#endif
}

// How a bounded wait of mini-gda or mini-proxy gives up: `return report_timeout(...)` (wait.h).
DISSECT_HD inline Status report_timeout(const char* what, WaitOn on, uint32_t id, uint64_t wanted,
                                        uint64_t reached, uint64_t waited_ns) {
  report_wait_timeout(what, on, id, wanted, reached, waited_ns);
  return Status::timeout;
}

}  // namespace dissect
