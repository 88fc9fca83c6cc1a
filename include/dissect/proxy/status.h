// The proxy producer's results (common/status.h), and how a bounded proxy wait reports giving up.
#pragma once

#include <cstdint>

#include "dissect/common/status.h"
#include "dissect/common/timeout.h"

namespace dissect::proxy {

using dissect::Status;
using dissect::to_string;

// Prints which ring and which descriptor index a wait gave up on (common/timeout.h), then traps
// on the device (a kernel whose proxy is gone cannot make progress).
DISSECT_HD inline Status report_timeout(const char* what, uint32_t ring_id, uint64_t index,
                                        uint64_t reached, uint64_t waited_ns) {
  report_wait_timeout(what, "ring", ring_id, false, "descriptor index", index, reached, waited_ns);
  return Status::timeout;
}

}  // namespace dissect::proxy
