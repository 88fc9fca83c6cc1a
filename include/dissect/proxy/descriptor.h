// The 16-byte request descriptor a producer (a GPU thread, or a host thread standing in for one)
// hands to a proxy worker, and its validity encoding.
//
// Layout: two little-endian 64-bit words, 16-byte aligned so that a device can write it with one
// st.v2.u64 (one PCIe TLP to mapped host memory).
//
//   word0  bits  0..31  local_offset   byte offset into the window's local (source) region
//          bits 32..62  length         bytes to write (write), or the addend (fetch_add)
//          bit  63      phase          lap parity, see below
//   word1  bits  0..39  remote_offset  byte offset into the window's remote (destination) region
//          bits 40..51  window         index into the proxy's window table (lkey/rkey/bases)
//          bits 52..55  operation      Operation; 0 is never valid, so zeroed memory reads empty
//          bits 56..62  reserved       zero
//          bit  63      phase          lap parity, equal to word0's
//
// Validity (tuned handoff). Descriptor number `index` of a ring of E = 2^k entries is written in
// slot index & (E - 1) during lap index >> k, with phase = 1 XOR (lap & 1): lap 0 writes 1, so a
// zeroed ring reads as empty, and each lap flips the bit, so a slot is never cleared (MSCCL++'s
// FIFO after PR #864). The consumer accepts a slot only when BOTH words carry the phase it expects.
// Why both: a producer cannot write lap L+2 into a slot before the consumer has taken lap L+1 from
// it (the ring never overwrites), so any word the consumer reads is either the old lap's or the
// new lap's, and their phases differ. A torn read (one half old, one half new, in either order, by
// a 16-byte store that reaches memory in two parts or by a consumer that loads the halves
// separately) therefore has one half with the old phase and is ignored until both halves are new.
#pragma once

#include <cstdint>
#include <type_traits>

#include "dissect/mlx5/endian.h"

namespace dissect::proxy {

enum class Operation : uint8_t {
  invalid = 0,    // what a zeroed slot decodes to; never executed
  write = 1,      // RDMA WRITE of `length` bytes, local -> remote
  fetch_add = 2,  // 8-byte FETCH_ADD of `length` (the addend) at remote; old value to local
};

struct alignas(16) Descriptor {
  uint64_t word0;
  uint64_t word1;
};
static_assert(sizeof(Descriptor) == 16);
static_assert(alignof(Descriptor) == 16);
static_assert(std::is_trivially_copyable_v<Descriptor>);

// A decoded request: what the producer asks for.
struct Request {
  Operation operation;
  uint32_t window;         // < MAX_WINDOWS
  uint32_t length;         // < 2^31 (write) or the addend (fetch_add)
  uint32_t local_offset;   // < 2^32
  uint64_t remote_offset;  // < 2^40
};

inline constexpr uint32_t MAX_WINDOWS = 1u << 12;
inline constexpr uint32_t MAX_LENGTH = (1u << 31) - 1;
inline constexpr uint64_t MAX_REMOTE_OFFSET = (1ull << 40) - 1;
inline constexpr uint64_t PHASE_BIT = 1ull << 63;

// Lap parity of descriptor `index` in a ring of 2^entries_log2 entries (lap 0 -> 1).
DISSECT_HD constexpr uint64_t phase_of(uint64_t index, uint32_t entries_log2) {
  return ((index >> entries_log2) & 1) ^ 1;
}

DISSECT_HD constexpr bool request_fits(const Request& r) {
  return r.window < MAX_WINDOWS && r.length <= MAX_LENGTH && r.remote_offset <= MAX_REMOTE_OFFSET &&
         (r.operation == Operation::write || r.operation == Operation::fetch_add);
}

DISSECT_HD constexpr Descriptor encode(const Request& r, uint64_t phase) {
  const uint64_t p = phase << 63;
  return Descriptor{uint64_t{r.local_offset} | (uint64_t{r.length} << 32) | p,
                    r.remote_offset | (uint64_t{r.window} << 40) |
                        (uint64_t{static_cast<uint8_t>(r.operation)} << 52) | p};
}

DISSECT_HD constexpr Request decode(const Descriptor& d) {
  return Request{static_cast<Operation>((d.word1 >> 52) & 0xf),
                 static_cast<uint32_t>((d.word1 >> 40) & 0xfff),
                 static_cast<uint32_t>((d.word0 >> 32) & 0x7fffffff),
                 static_cast<uint32_t>(d.word0 & 0xffffffff), d.word1 & MAX_REMOTE_OFFSET};
}

// Both halves carry `phase` (0 or 1): the slot holds a whole descriptor of the expected lap.
DISSECT_HD constexpr bool halves_carry_phase(uint64_t word0, uint64_t word1, uint64_t phase) {
  return (word0 >> 63) == phase && (word1 >> 63) == phase;
}

}  // namespace dissect::proxy
