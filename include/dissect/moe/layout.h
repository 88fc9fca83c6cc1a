// Where everything of one rank lives: one arena per rank, registered once (one lkey, one rkey),
// at the same offsets on every rank, as DeepEP's symmetric NVSHMEM buffer is. A peer writes into
// rank d's arena at (d's base + offset) with d's rkey.
//
//   inputs            x [tokens][hidden] BF16, topk_idx [max_tokens][top_k] (-1 = masked),
//                     topk_weights [max_tokens][top_k] float
//   dispatch send     send_x [max_tokens][message]: each token packed once (FP8 + scales)
//   dispatch recv     recv_x [local_experts][ranks][max_tokens][message], written by the NIC;
//                     recv_count [local_experts][ranks] uint64, n + 1 after an atomic (0: not yet)
//   dispatch output   packed_x [local_experts][ranks x max_tokens][hidden] FP8,
//                     packed_scales [..][scales], packed_src_info [..] int32 (source token),
//                     packed_layout_range [local_experts][ranks] (count << 32 | begin),
//                     packed_count [local_experts]
//   combine input     expert_out [local_experts][ranks x max_tokens][hidden] BF16
//   combine recv      combine_recv_x [experts][max_tokens][hidden] BF16, written by the NIC;
//                     combine_recv_flag [experts] uint64: +1 per combine from each expert
//   combine output    combined_x [max_tokens][hidden] BF16
//   local counters    next_slot [experts] (DeepEP's atomic_counter_per_expert), finished [experts]
//                     (atomic_finish_counter_per_expert), atomic_result [ranks x
//                     local_experts] (each QP's fetch-add results, never read)
//   timing            stamps: PhaseStamps (moe/stamps.h)
#pragma once

#include <cstddef>
#include <cstdint>

#include "dissect/common/device.h"
#include "dissect/moe/shape.h"

namespace dissect::moe {

struct ArenaLayout {
  uint64_t x, topk_idx, topk_weights;
  uint64_t send_x, recv_x, recv_count;
  uint64_t packed_x, packed_scales, packed_src_info, packed_layout_range, packed_count;
  uint64_t expert_out, combine_recv_x, combine_recv_flag, combined_x;
  uint64_t next_slot, finished, atomic_result, stamps;
  uint64_t bytes;  // the whole arena
};

namespace detail {
DISSECT_HD inline uint64_t place(uint64_t& cursor, uint64_t bytes) {
  const uint64_t at = cursor;
  cursor = (cursor + bytes + 255) & ~uint64_t{255};  // 256 B apart: no two regions share a line
  return at;
}
}  // namespace detail

inline constexpr uint64_t STAMP_BYTES = 256;  // room for PhaseStamps (static_assert there)

DISSECT_HD inline ArenaLayout arena_layout(const MoeShape& s) {
  const uint64_t tokens = s.max_tokens, hidden = s.hidden, local = local_experts(s);
  const uint64_t capacity = expert_capacity(s), message = dispatch_message_bytes(s);
  ArenaLayout a{};
  uint64_t c = 0;
  a.x = detail::place(c, tokens * hidden * 2);
  a.topk_idx = detail::place(c, tokens * s.top_k * 4);
  a.topk_weights = detail::place(c, tokens * s.top_k * 4);
  a.send_x = detail::place(c, tokens * message);
  a.recv_x = detail::place(c, local * s.ranks * tokens * message);
  a.recv_count = detail::place(c, local * s.ranks * 8);
  a.packed_x = detail::place(c, local * capacity * hidden);
  a.packed_scales = detail::place(c, local * capacity * scales_per_token(s) * 4);
  a.packed_src_info = detail::place(c, local * capacity * 4);
  a.packed_layout_range = detail::place(c, local * s.ranks * 8);
  a.packed_count = detail::place(c, local * 4);
  a.expert_out = detail::place(c, local * capacity * hidden * 2);
  a.combine_recv_x = detail::place(c, uint64_t{s.experts} * tokens * hidden * 2);
  a.combine_recv_flag = detail::place(c, uint64_t{s.experts} * 8);
  a.combined_x = detail::place(c, tokens * hidden * 2);
  a.next_slot = detail::place(c, uint64_t{s.experts} * 4);
  a.finished = detail::place(c, uint64_t{s.experts} * 4);
  a.atomic_result = detail::place(c, local * s.ranks * 8);  // one word per QP
  a.stamps = detail::place(c, STAMP_BYTES);
  a.bytes = c;
  return a;
}

// Byte offsets inside the regions (the same on every rank).
DISSECT_HD inline uint64_t recv_x_offset(const MoeShape& s, const ArenaLayout& a, uint32_t local,
                                         uint32_t source, uint32_t slot) {
  return a.recv_x + ((uint64_t{local} * s.ranks + source) * s.max_tokens + slot) *
                        dispatch_message_bytes(s);
}
DISSECT_HD inline uint64_t recv_count_offset(const MoeShape& s, const ArenaLayout& a,
                                             uint32_t local, uint32_t source) {
  return a.recv_count + (uint64_t{local} * s.ranks + source) * 8;
}
DISSECT_HD inline uint64_t combine_recv_offset(const MoeShape& s, const ArenaLayout& a,
                                               uint32_t expert, uint32_t token) {
  return a.combine_recv_x + (uint64_t{expert} * s.max_tokens + token) * combine_message_bytes(s);
}
DISSECT_HD inline uint64_t combine_flag_offset(const ArenaLayout& a, uint32_t expert) {
  return a.combine_recv_flag + uint64_t{expert} * 8;
}

}  // namespace dissect::moe
