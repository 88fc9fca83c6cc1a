// What the MoE client needs from a group of lanes beyond gda/warp.h's Warp and HostWarp: a sum.
#pragma once

#include <cstdint>

#include "dissect/gda/warp.h"

namespace dissect::moe {

using gda::HostWarp;
#if defined(__CUDACC__)
using gda::Warp;
__device__ inline uint32_t lane_sum(const Warp&, uint32_t v) { return __reduce_add_sync(~0u, v); }
#endif
DISSECT_HD inline uint32_t lane_sum(const HostWarp&, uint32_t v) { return v; }

// Copies `bytes` (a multiple of 4, both ends 4-aligned) word by word over the lanes.
template <typename Lanes>
DISSECT_HD inline void copy_words(const Lanes& lanes, void* to, const void* from, uint32_t bytes) {
  auto* out = static_cast<uint32_t*>(to);
  const auto* in = static_cast<const uint32_t*>(from);
  for (uint32_t i = lanes.first(); i < bytes / 4; i += lanes.step) out[i] = in[i];
}

}  // namespace dissect::moe
