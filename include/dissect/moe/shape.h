// The shape of one MoE low-latency dispatch/combine (DeepEP's low-latency mode) and the byte
// sizes that follow from it. DeepSeek-V3 by default: hidden 7,168, top-8 of 256 experts, up to
// 128 tokens per rank.
//
// Dispatch message (DeepEP, kUseFP8): a 16 B header (int32 source token index, 12 B unused),
// `hidden` FP8 E4M3 bytes, then hidden / 128 float scales (the dequantisation factor of each
// 128-element group): 16 + 7,168 + 56 x 4 = 7,408 B per (token, expert) pair.
// Combine message: the expert's BF16 output, hidden x 2 = 14,336 B per pair.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "dissect/common/device.h"

namespace dissect::moe {

inline constexpr uint32_t SCALE_GROUP = 128;          // elements per FP8 scale (DeepEP, V3)
inline constexpr uint32_t MESSAGE_HEADER_BYTES = 16;  // DeepEP's int4 header: source index
inline constexpr uint32_t MAX_TOKENS_PER_RANK = 128;  // the range: 1..128
inline constexpr uint32_t MAX_TOP_K = 32;             // one top-k entry per lane at most

struct MoeShape {
  uint32_t hidden = 7168;
  uint32_t top_k = 8;
  uint32_t experts = 256;
  uint32_t ranks = 8;
  uint32_t tokens = 128;      // tokens this rank dispatches (1..max_tokens)
  uint32_t max_tokens = 128;  // DeepEP's num_max_dispatch_tokens_per_rank: sizes every buffer
};

DISSECT_HD inline uint32_t local_experts(const MoeShape& s) { return s.experts / s.ranks; }
DISSECT_HD inline uint32_t scales_per_token(const MoeShape& s) { return s.hidden / SCALE_GROUP; }
DISSECT_HD inline uint32_t dispatch_message_bytes(const MoeShape& s) {
  return MESSAGE_HEADER_BYTES + s.hidden + scales_per_token(s) * 4;
}
DISSECT_HD inline uint32_t combine_message_bytes(const MoeShape& s) { return s.hidden * 2; }
DISSECT_HD inline uint32_t expert_rank(const MoeShape& s, uint32_t expert) {
  return expert / local_experts(s);
}
DISSECT_HD inline uint32_t expert_local_index(const MoeShape& s, uint32_t expert) {
  return expert % local_experts(s);
}
// The expert side holds up to ranks x max_tokens tokens per local expert (DeepEP's packed_recv_x).
DISSECT_HD inline uint32_t expert_capacity(const MoeShape& s) { return s.ranks * s.max_tokens; }

// Empty when the shape is usable; otherwise one line naming the first field that is not, and its
// value (host only).
std::string shape_error(const MoeShape& s);

}  // namespace dissect::moe
