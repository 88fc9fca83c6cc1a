// What travels: packing a BF16 token into a dispatch message (FP8 + per-128 scales, DeepEP's
// layout), the stand-in expert that turns a received token into a BF16 output, and the weighted
// sum of the combine. Each step loops over 128-element groups as `for (g = lanes.first(); g < n;
// g += lanes.step)`, so a warp splits the groups over its lanes (gda::Warp) and a host thread does
// them all (gda::HostWarp); the bytes are the same either way.
#pragma once

#include <cstdint>

#include "dissect/common/device.h"
#include "dissect/moe/numerics.h"
#include "dissect/moe/shape.h"

namespace dissect::moe {

// Header of a dispatch message: DeepEP's int4, of which the first int32 is the source token index.
struct alignas(16) MessageHeader {
  int32_t source_token;
  uint32_t reserved[3];
};
static_assert(sizeof(MessageHeader) == MESSAGE_HEADER_BYTES, "DeepEP's 16 B message header");

// Quantises one group of 128 BF16 values into E4M3 bytes; returns the dequantisation factor.
DISSECT_HD inline float quantise_group(const uint16_t* in, uint8_t* out) {
  float amax = AMAX_FLOOR;
  for (uint32_t i = 0; i < SCALE_GROUP; ++i) amax = fmaxf(amax, fabsf(bf16_to_float(in[i])));
  const float scale = div_rn(FP8_E4M3_MAX, amax);
  for (uint32_t i = 0; i < SCALE_GROUP; ++i) out[i] = float_to_e4m3(mul_rn(bf16_to_float(in[i]), scale));
  return div_rn(amax, FP8_E4M3_MAX);
}

DISSECT_HD inline uint8_t* message_fp8(uint8_t* message) { return message + MESSAGE_HEADER_BYTES; }
DISSECT_HD inline float* message_scales(uint8_t* message, const MoeShape& s) {
  return reinterpret_cast<float*>(message + MESSAGE_HEADER_BYTES + s.hidden);
}

// Packs token `token` (hidden BF16 values at `x`) into `message` (dispatch_message_bytes).
template <typename Lanes>
DISSECT_HD inline void pack_dispatch_message(const Lanes& lanes, const MoeShape& s,
                                             const uint16_t* x, uint32_t token, uint8_t* message) {
  if (lanes.leader()) {
    MessageHeader h{static_cast<int32_t>(token), {0, 0, 0}};
    memcpy(message, &h, sizeof h);
  }
  float* scales = message_scales(message, s);
  for (uint32_t g = lanes.first(); g < scales_per_token(s); g += lanes.step) {
    scales[g] = quantise_group(x + g * SCALE_GROUP, message_fp8(message) + g * SCALE_GROUP);
  }
}

// The stand-in expert: expert e multiplies the dequantised token by 1 + (e % 16) / 16 (exact in
// float), so every expert's contribution to a combined output differs and is checked.
DISSECT_HD inline float expert_gain(uint32_t expert) {
  return 1.0f + static_cast<float>(expert % 16) * 0.0625f;
}

// expert_out = BF16(dequant(fp8, scales) x gain(expert)) for one token.
template <typename Lanes>
DISSECT_HD inline void run_expert(const Lanes& lanes, const MoeShape& s, uint32_t expert,
                                  const uint8_t* fp8, const float* scales, uint16_t* out) {
  const float gain = expert_gain(expert);
  for (uint32_t g = lanes.first(); g < scales_per_token(s); g += lanes.step) {
    for (uint32_t i = g * SCALE_GROUP; i < (g + 1) * SCALE_GROUP; ++i) {
      out[i] = float_to_bf16(mul_rn(mul_rn(e4m3_to_float(fp8[i]), scales[g]), gain));
    }
  }
}

// combined[h] = BF16(sum over k in order, masked entries skipped, of weight[k] x expert k's
// output[h]); `output_of(k)` is that output (BF16, hidden values), nullptr for a masked entry.
template <typename Lanes, typename OutputOf>
DISSECT_HD inline void combine_token(const Lanes& lanes, const MoeShape& s, const float* weights,
                                     OutputOf&& output_of, uint16_t* combined) {
  for (uint32_t g = lanes.first(); g < scales_per_token(s); g += lanes.step) {
    for (uint32_t i = g * SCALE_GROUP; i < (g + 1) * SCALE_GROUP; ++i) {
      float sum = 0.0f;
      for (uint32_t k = 0; k < s.top_k; ++k) {
        const uint16_t* out = output_of(k);
        if (out) sum = add_rn(sum, mul_rn(weights[k], bf16_to_float(out[i])));
      }
      combined[i] = float_to_bf16(sum);
    }
  }
}

}  // namespace dissect::moe
