// Results of the proxy's producer calls, and the one place a bounded proxy wait reports giving up.
#pragma once

#include <cstdint>
#include <cstdio>

#include "dissect/common/timeout.h"
#include "dissect/mlx5/endian.h"

namespace dissect::proxy {

enum class Status : uint32_t {
  ok = 0,
  timeout,   // a bounded wait expired; report_timeout() printed the ring and the index
  rejected,  // the request does not fit a descriptor (field out of range); nothing was enqueued
  failed,    // the worker recorded an error on this ring (bad descriptor or error CQE)
};

DISSECT_HD constexpr const char* to_string(Status s) {
  return s == Status::ok         ? "ok"
         : s == Status::timeout  ? "timeout"
         : s == Status::rejected ? "rejected"
                                 : "failed";
}

// Prints which ring and which descriptor index a wait gave up on (common/timeout.h), then traps
// on the device (a kernel whose proxy is gone cannot make progress).
DISSECT_HD inline Status report_timeout(const char* what, uint32_t ring_id, uint64_t index,
                                        uint64_t reached, uint64_t waited_ns) {
  report_wait_timeout(what, "ring", ring_id, false, "descriptor index", index, reached, waited_ns);
  return Status::timeout;
}

}  // namespace dissect::proxy
