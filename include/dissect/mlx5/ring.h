// WQEBB ring arithmetic.
//
// Producer and consumer counters are free-running 64-bit WQEBB indices; a slot is `index & mask`.
// A WQE may straddle the end of the ring: its 16-byte segment k lives in WQEBB (start + k / 4),
// masked, so every segment is addressed through `segment()` and never by pointer arithmetic past
// the WQE's first basic block (rdma-core restarts at slot 0 at qend; NVSHMEM masks each WQEBB).
#pragma once

#include <cstdint>

#include "dissect/mlx5/wqe.h"

namespace dissect::mlx5 {

DISSECT_HD constexpr bool is_power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

struct send_ring {
  uint8_t* buffer;        // wqebb_count * 64 bytes
  uint32_t wqebb_count;   // power of two

  DISSECT_HD uint32_t mask() const { return wqebb_count - 1; }
  DISSECT_HD uint8_t* wqebb(uint64_t index) const {
    return buffer + (static_cast<uint64_t>(index & mask()) << MLX5_SEND_WQE_SHIFT);
  }
  // The 16-byte segment number `ds_offset` of the WQE that starts at WQEBB `wqe_start`.
  DISSECT_HD uint8_t* segment(uint64_t wqe_start, uint32_t ds_offset) const {
    return wqebb(wqe_start + ds_offset / MLX5_DS_PER_WQEBB) +
           (ds_offset % MLX5_DS_PER_WQEBB) * MLX5_SEND_WQE_DS;
  }
  // Byte `byte_offset` of the WQE starting at `wqe_start`, for inline payloads that cross WQEBBs.
  DISSECT_HD uint8_t* byte_at(uint64_t wqe_start, uint32_t byte_offset) const {
    return wqebb(wqe_start + byte_offset / MLX5_SEND_WQE_BB) + byte_offset % MLX5_SEND_WQE_BB;
  }
};

// Copies `length` bytes into a WQE starting at its byte `byte_offset`, splitting at WQEBB
// boundaries so that a payload crossing the ring end wraps to slot 0.
DISSECT_HD inline void copy_into_wqe(const send_ring& ring, uint64_t wqe_start,
                                     uint32_t byte_offset, const void* source, uint32_t length) {
  const uint8_t* in = static_cast<const uint8_t*>(source);
  for (uint32_t i = 0; i < length; ++i) *ring.byte_at(wqe_start, byte_offset + i) = in[i];
}
DISSECT_HD inline void copy_from_wqe(const send_ring& ring, uint64_t wqe_start,
                                     uint32_t byte_offset, void* destination, uint32_t length) {
  uint8_t* out = static_cast<uint8_t*>(destination);
  for (uint32_t i = 0; i < length; ++i) out[i] = *ring.byte_at(wqe_start, byte_offset + i);
}

// Rebuilds a 64-bit counter from its low 16 bits, given a 64-bit reference known to be at most
// 2^15 ahead of it (the producer counter: a send queue never holds more than 32768 WQEBBs).
DISSECT_HD constexpr uint64_t widen_index16(uint16_t low, uint64_t reference) {
  const uint16_t distance = static_cast<uint16_t>(static_cast<uint16_t>(reference) - low);
  return reference - distance;
}
static_assert(widen_index16(0xfffe, 0x10003) == 0xfffe);
static_assert(widen_index16(0x0003, 0x10003) == 0x10003);

inline constexpr uint32_t MLX5_MAX_SQ_WQEBBS = 1u << 15;  // keeps 16-bit wqe_counter math valid

}  // namespace dissect::mlx5
