// The host reference of a dispatch and a combine, and the checks of a run against it. The
// reference packs and combines with the same functions as the device (moe/message.h), so every
// byte is compared exactly; it knows nothing of slots, which are taken in whatever order the warps
// reach the atomic, and so matches received tokens by their source index.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dissect/moe/layout.h"
#include "dissect/moe/routing.h"
#include "dissect/moe/shape.h"

namespace dissect::moe {

// One rank's outputs, read back to host memory (pointers to arrays laid out as in layout.h).
struct DispatchView {
  const uint8_t* packed_x;
  const float* packed_scales;
  const int32_t* packed_src_info;
  const uint64_t* packed_layout_range;
  const uint32_t* packed_count;
};

// What a check found: every mismatch counted, the first few described (rank, expert, source,
// token, what differed).
struct CheckReport {
  uint64_t checked = 0;     // tokens or outputs compared
  uint64_t mismatches = 0;
  std::vector<std::string> first;  // at most MAX_DESCRIBED
  static constexpr size_t MAX_DESCRIBED = 8;
  void fail(std::string what);
  bool ok() const { return mismatches == 0 && checked > 0; }
};

// The tokens rank `source` sends to `expert`, in token order.
std::vector<uint32_t> routed_tokens(const MoeShape& s, const RankInputs& source, uint32_t expert);

// The dispatch message of one token (dispatch_message_bytes), as the host packs it.
std::vector<uint8_t> reference_message(const MoeShape& s, const RankInputs& source, uint32_t token);

// Every (local expert, source rank) pair of `rank`: the count, each received token once and only
// the routed ones, its FP8 bytes and scales, and the packed count per expert.
void check_dispatch(const MoeShape& s, const std::vector<RankInputs>& inputs, uint32_t rank,
                    const DispatchView& view, CheckReport& report);

// The combined output of `token` of `rank` (hidden BF16 values), as the host computes it.
std::vector<uint16_t> reference_combined(const MoeShape& s, const RankInputs& in, uint32_t token);

// Every token of `rank`: combined_x ([tokens][hidden] BF16) against reference_combined.
void check_combine(const MoeShape& s, const std::vector<RankInputs>& inputs, uint32_t rank,
                   const uint16_t* combined_x, CheckReport& report);

}  // namespace dissect::moe
