// The result of every data-path call of mini-gda and mini-proxy, on host and device alike.
#pragma once

#include <cstdint>

#include "dissect/common/device.h"

namespace dissect {

// The values are part of the device ABI (kernels store them for the host to read): append only.
enum class Status : uint32_t {
  ok = 0,
  timeout,          // a bounded wait expired; it printed what it waited for (common/timeout.h)
  cq_error,         // an error CQE retired this QP's WQEs; SendQueueState::error holds the syndrome
  invalid_request,  // refused before anything was reserved or enqueued (put_value of more than
                    // 8 bytes, a proxy request whose fields do not fit a descriptor)
  failed,           // the proxy worker recorded an error on the ring (bad descriptor or error CQE)
};

DISSECT_HD constexpr const char* to_string(Status s) {
  switch (s) {
    case Status::ok: return "ok";
    case Status::timeout: return "timeout";
    case Status::cq_error: return "cq_error";
    case Status::invalid_request: return "invalid_request";
    case Status::failed: return "failed";
  }
  return "unknown status";
}

}  // namespace dissect
