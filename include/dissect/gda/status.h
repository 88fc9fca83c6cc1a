// Results of the gda data path, and the one place a bounded wait reports that it gave up.
#pragma once

#include <cstdint>
#include <cstdio>

#include "dissect/mlx5/endian.h"

namespace dissect::gda {

enum class Status : uint32_t {
  ok = 0,
  timeout,   // a bounded wait expired; report_timeout() has printed what it waited for
  cq_error,  // an error CQE retired this QP's WQEs; SendQueueState::error holds the syndrome
};

DISSECT_HD constexpr const char* to_string(Status s) {
  return s == Status::ok ? "ok" : s == Status::timeout ? "timeout" : "cq_error";
}

// Prints which QP and which index a wait gave up on. On the device it then traps, as DeepEP's
// timeout_while does: a kernel that lost a completion cannot make progress, and a trap surfaces the
// fault at the launch instead of a hang. On the host the caller gets Status::timeout.
DISSECT_HD inline Status report_timeout(const char* what, uint32_t qpn, uint64_t wanted,
                                        uint64_t reached, uint64_t waited_ns) {
#if defined(__CUDA_ARCH__)
  printf("dissect: timed out after %llu ns waiting for %s on QP 0x%x: index %llu, reached %llu\n",
         static_cast<unsigned long long>(waited_ns), what, qpn,
         static_cast<unsigned long long>(wanted), static_cast<unsigned long long>(reached));
  __trap();
#else
  std::fprintf(stderr,
               "dissect: timed out after %llu ns waiting for %s on QP 0x%x: index %llu, "
               "reached %llu\n",
               static_cast<unsigned long long>(waited_ns), what, qpn,
               static_cast<unsigned long long>(wanted), static_cast<unsigned long long>(reached));
#endif
  return Status::timeout;
}

}  // namespace dissect::gda
