// The gda data path's results (common/status.h), and how a bounded gda wait reports giving up.
#pragma once

#include <cstdint>

#include "dissect/common/status.h"
#include "dissect/common/timeout.h"

namespace dissect::gda {

using dissect::Status;
using dissect::to_string;

// Prints which QP and which index a wait gave up on (common/timeout.h), then traps on the device.
DISSECT_HD inline Status report_timeout(const char* what, uint32_t qpn, uint64_t wanted,
                                        uint64_t reached, uint64_t waited_ns) {
  report_wait_timeout(what, "QP", qpn, true, "index", wanted, reached, waited_ns);
  return Status::timeout;
}

}  // namespace dissect::gda
