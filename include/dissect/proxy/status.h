// Results of the proxy's producer calls, and the one place a bounded proxy wait reports giving up.
#pragma once

#include <cstdint>
#include <cstdio>

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

// Prints what a wait gave up on: which ring, which descriptor index, how far the counter got.
// On the device it then traps (a kernel whose proxy is gone cannot make progress); on the host
// the caller gets Status::timeout.
DISSECT_HD inline Status report_timeout(const char* what, uint32_t ring_id, uint64_t index,
                                        uint64_t reached, uint64_t waited_ns) {
#if defined(__CUDA_ARCH__)
  printf("dissect: proxy timed out after %llu ns waiting for %s on ring %u: descriptor index %llu, "
         "reached %llu\n",
         static_cast<unsigned long long>(waited_ns), what, ring_id,
         static_cast<unsigned long long>(index), static_cast<unsigned long long>(reached));
  __trap();
#else
  std::fprintf(stderr,
               "dissect: proxy timed out after %llu ns waiting for %s on ring %u: descriptor index "
               "%llu, reached %llu\n",
               static_cast<unsigned long long>(waited_ns), what, ring_id,
               static_cast<unsigned long long>(index), static_cast<unsigned long long>(reached));
#endif
  return Status::timeout;
}

}  // namespace dissect::proxy
