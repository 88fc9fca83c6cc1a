// Results of the gda data path, and the one place a bounded wait reports that it gave up.
#pragma once

#include <cstdint>
#include <cstdio>

#include "dissect/common/timeout.h"
#include "dissect/mlx5/endian.h"

namespace dissect::gda {

enum class Status : uint32_t {
  ok = 0,
  timeout,   // a bounded wait expired; report_timeout() has printed what it waited for
  cq_error,  // an error CQE retired this QP's WQEs; SendQueueState::error holds the syndrome
  invalid_request,  // refused before anything was reserved (e.g. put_value of more than 8 bytes)
};

DISSECT_HD constexpr const char* to_string(Status s) {
  return s == Status::ok ? "ok" : s == Status::timeout ? "timeout" :
         s == Status::cq_error ? "cq_error" : "invalid_request";
}

// Prints which QP and which index a wait gave up on (common/timeout.h), then traps on the device.
DISSECT_HD inline Status report_timeout(const char* what, uint32_t qpn, uint64_t wanted,
                                        uint64_t reached, uint64_t waited_ns) {
  report_wait_timeout(what, "QP", qpn, true, "index", wanted, reached, waited_ns);
  return Status::timeout;
}

}  // namespace dissect::gda
