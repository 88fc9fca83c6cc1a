// What the peer libraries' GPU tests share (gdaki_gpu_test, nvshmem_gpu_test): the puts' slots and
// lengths, and how a kernel reports the check that failed.
#pragma once

#include <cstdint>

#include "gpu_test_support.h"

namespace dissect::gputest {

inline constexpr uint32_t SLOT = 256;  // put i lands at slot i of the destination

// Put i's length, 1..200 B: every length a library's inline and pointer paths split on.
DISSECT_HD inline uint32_t put_length(uint32_t i) { return 1 + (i * 37) % 200; }

// Kernel results, in mapped host memory: [0] status (0 ok, 1 + index of the failed check),
// [1] the failing op, [2] the library's verdict or the CQE's syndrome.
__device__ inline void fail(uint32_t* result, uint32_t check, uint32_t op, uint32_t detail) {
  result[1] = op, result[2] = detail, result[0] = check;
}

}  // namespace dissect::gputest
